#include "parallel/cp/timeline.hpp"

#include "comm/trace_file.hpp"

namespace dtrain::parallel::cp {

RingTimeline::RingTimeline(const comm::Communicator& comm, SequenceLayout layout, Pass pass)
    : on_(comm::trace::enabled()), world_rank_(comm.op_log().world_rank()), pass_(pass), layout_(layout) {
  if (on_) {
    thread_ = "cp ring " + comm.label() + " (rank " + std::to_string(comm.rank()) + " of " +
              std::to_string(comm.size()) + ")";
  }
}

std::int64_t RingTimeline::now() { return comm::steady_ns(); }

std::string RingTimeline::args(int step) const {
  return std::string("\"pass\":\"") + (pass_ == Pass::forward ? "forward" : "backward") + "\",\"layout\":\"" +
         (layout_ == SequenceLayout::zigzag ? "zigzag" : "contiguous") + "\",\"step\":" + std::to_string(step);
}

void RingTimeline::block(int step, int owner, std::int64_t start) const {
  if (!on_) return;
  comm::trace::write_span(world_rank_,
                          {thread_, "ATTENTION", "cp", start, now(), args(step) + ",\"owner\":" + std::to_string(owner)});
}

void RingTimeline::waited(Wait what, int step, std::int64_t start) const {
  if (!on_) return;
  comm::trace::write_span(world_rank_, {thread_, what == Wait::keys_values ? "WAIT_KV" : "WAIT_ACCUMULATOR", "cp_wait",
                                        start, now(), args(step)});
}

}  // namespace dtrain::parallel::cp
