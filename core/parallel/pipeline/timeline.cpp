#include "parallel/pipeline/timeline.hpp"

#include "comm/trace_file.hpp"

namespace dtrain::parallel::pipeline {

Timeline::Timeline(const comm::Communicator& comm, int step)
    : on_(comm::trace::enabled()), world_rank_(comm.op_log().world_rank()), step_(step) {
  if (on_) {
    thread_ = "pipeline " + comm.label() + " (stage " + std::to_string(comm.rank()) + " of " +
              std::to_string(comm.size()) + ")";
  }
}

std::int64_t Timeline::now() { return comm::steady_ns(); }

void Timeline::compute(const Action& action, int stage, std::int64_t start) const {
  if (!on_) return;
  comm::trace::write_span(
      world_rank_, {thread_, action_name(action.kind), "pipeline", start, now(),
                    "\"step\":" + std::to_string(step_) + ",\"chunk\":" + std::to_string(action.chunk) +
                        ",\"microbatch\":" + std::to_string(action.microbatch) + ",\"stage\":" + std::to_string(stage)});
}

void Timeline::wait(Direction direction, int chunk, int microbatch, int peer, std::int64_t start) const {
  if (!on_) return;
  comm::trace::write_span(
      world_rank_,
      {thread_, direction == Direction::activation ? "WAIT_ACTIVATION" : "WAIT_GRAD", "pipeline_wait", start, now(),
       "\"step\":" + std::to_string(step_) + ",\"chunk\":" + std::to_string(chunk) +
           ",\"microbatch\":" + std::to_string(microbatch) + ",\"peer\":" + std::to_string(peer)});
}

}  // namespace dtrain::parallel::pipeline
