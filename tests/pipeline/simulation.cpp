#include "simulation.hpp"

#include <algorithm>

namespace dtrain_test::pipeline {

namespace {

double duration(dt_pipeline_action_kind kind) { return kind == DT_PIPELINE_BACKWARD ? 2 : 1; }

bool is_gradient(dt_pipeline_action_kind kind) {
  return kind == DT_PIPELINE_SEND_GRAD || kind == DT_PIPELINE_RECV_GRAD;
}

}  // namespace

double Simulation::bubble_fraction() const { return makespan == 0 ? 0 : (makespan - busy.at(0)) / makespan; }

int global_stage(const ScheduleCase& shape, int rank, int chunk) { return chunk * shape.stages + rank; }

bool is_send(dt_pipeline_action_kind kind) {
  return kind == DT_PIPELINE_SEND_ACTIVATION || kind == DT_PIPELINE_SEND_GRAD;
}

bool is_receive(dt_pipeline_action_kind kind) {
  return kind == DT_PIPELINE_RECV_ACTIVATION || kind == DT_PIPELINE_RECV_GRAD;
}

MessageKey message_of(const ScheduleCase& shape, int rank, const dt_pipeline_action& action) {
  const int stage = global_stage(shape, rank, action.chunk);
  const bool gradient = is_gradient(action.kind);
  if (is_send(action.kind)) return {gradient, stage, action.microbatch};
  // Activations come from the stage before, gradients from the one after.
  return {gradient, gradient ? stage + 1 : stage - 1, action.microbatch};
}

Simulation simulate(const ReadSchedule& schedule) {
  const ScheduleCase& shape = schedule.shape;
  const size_t ranks = schedule.ranks.size();
  Simulation result;
  result.stopped_at.assign(ranks, 0);
  result.busy.assign(ranks, 0);
  std::vector<double> clock(ranks, 0);
  std::map<MessageKey, double> posted;  // sent, not yet received: when
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t rank = 0; rank < ranks; ++rank) {
      const auto& actions = schedule.ranks[rank];
      size_t& next = result.stopped_at[rank];
      for (; next < actions.size(); ++next) {
        const dt_pipeline_action& action = actions[next];
        const int r = static_cast<int>(rank);
        if (is_send(action.kind)) {
          posted.emplace(message_of(shape, r, action), clock[rank]);
        } else if (is_receive(action.kind)) {
          auto message = posted.find(message_of(shape, r, action));
          if (message == posted.end()) break;  // blocks until its send is posted
          clock[rank] = std::max(clock[rank], message->second);
          posted.erase(message);
        } else {
          const double start = clock[rank];
          clock[rank] += duration(action.kind);
          result.busy[rank] += duration(action.kind);
          result.compute[{action.kind, global_stage(shape, r, action.chunk), action.microbatch}] = {start, clock[rank]};
        }
        progress = true;
      }
    }
  }
  result.finished = true;
  for (size_t rank = 0; rank < ranks; ++rank) {
    result.finished = result.finished && result.stopped_at[rank] == schedule.ranks[rank].size();
    result.makespan = std::max(result.makespan, clock[rank]);
  }
  return result;
}

}  // namespace dtrain_test::pipeline
