#include "parallel/pipeline/executor.hpp"

#include <string>
#include <utility>

#include "base/error.hpp"
#include "parallel/pipeline/step_run.hpp"

namespace dtrain::parallel::pipeline {

namespace {

bool is_compute(ActionKind kind) {
  return kind == ActionKind::forward || kind == ActionKind::backward || kind == ActionKind::backward_input ||
         kind == ActionKind::backward_weight;
}

std::vector<std::size_t> next_compute_indices(const std::vector<Action>& actions) {
  std::vector<std::size_t> next(actions.size());
  std::size_t following = actions.size();
  for (std::size_t i = actions.size(); i-- > 0;) {
    next[i] = following;
    if (is_compute(actions[i].kind)) following = i;
  }
  return next;
}

const Schedule& matching(const Schedule& schedule, const comm::Communicator& comm) {
  if (comm.size() != schedule.shape().stages) {
    raise(DT_ERR_INVALID_ARGUMENT, "comm has " + std::to_string(comm.size()) + " ranks but the schedule " +
                                       std::to_string(schedule.shape().stages) + " stages");
  }
  return schedule;
}

}  // namespace

Executor::Executor(std::shared_ptr<comm::Communicator> comm, const Schedule& schedule,
                   const ActivationSpec& activation, StageFunctions functions)
    : comm_(std::move(comm)),
      shape_(schedule.shape()),
      actions_(matching(schedule, *comm_).actions(comm_->rank())),
      next_compute_(next_compute_indices(actions_)),
      activation_(activation),
      functions_(std::move(functions)),
      pool_(static_cast<std::size_t>(activation.elements) * dtype_size(activation.dtype)) {}

StepStats Executor::step() {
  return StepRun(*comm_, shape_, actions_, next_compute_, activation_, functions_, pool_, abandoned_, steps_++).run();
}

}  // namespace dtrain::parallel::pipeline
