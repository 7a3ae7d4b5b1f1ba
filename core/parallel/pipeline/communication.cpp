#include "parallel/pipeline/communication.hpp"

namespace dtrain::parallel::pipeline {

namespace {

bool produces_input_grad(ActionKind kind) { return kind == ActionKind::backward || kind == ActionKind::backward_input; }

}  // namespace

std::vector<Action> with_communication(const std::vector<Action>& compute, const Shape& shape, int rank) {
  const int previous = (rank + shape.stages - 1) % shape.stages;
  const int next = (rank + 1) % shape.stages;
  // A single rank passes activations and gradients between its own chunks.
  const bool alone = shape.stages == 1;
  std::vector<Action> actions;
  actions.reserve(compute.size() * 3);
  for (const Action& action : compute) {
    const int stage = action.chunk * shape.stages + rank;
    const bool first = stage == 0;
    const bool last = stage == shape.global_stages() - 1;
    auto message = [&](ActionKind kind, int peer) { return Action{kind, action.chunk, action.microbatch, peer}; };
    if (action.kind == ActionKind::forward) {
      if (!first && !alone) actions.push_back(message(ActionKind::recv_activation, previous));
      actions.push_back(action);
      if (!last && !alone) actions.push_back(message(ActionKind::send_activation, next));
    } else if (produces_input_grad(action.kind)) {
      if (!last && !alone) actions.push_back(message(ActionKind::recv_grad, next));
      actions.push_back(action);
      if (!first && !alone) actions.push_back(message(ActionKind::send_grad, previous));
    } else {
      actions.push_back(action);
    }
  }
  return actions;
}

}  // namespace dtrain::parallel::pipeline
