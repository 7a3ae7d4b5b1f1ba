// An allreduce through the ranks' mailboxes (mailboxes.hpp), for
// communicators whose ranks all run on one host: each rank writes its
// contribution to its own mailbox and, once every peer's is there, reduces
// them all in rank order, so every rank computes the same bits. One step and
// no message, where recursive doubling takes log2(n) rounds of messages
// through UCX's queues.
//
// The engine runs it for callers that wait at once (immediate_allreduce.hpp);
// local_allreduce() in algorithms.hpp schedules it as an Operation for the
// others. Ranks on either path match: both take the next mailbox stamp in the
// order of collectives. Ranks that disagree about the size, the dtype or the
// reduction get DT_ERR_MISMATCH.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/tensor.hpp"
#include "comm/backends/ucx/combine.hpp"
#include "comm/backends/ucx/immediate_allreduce.hpp"
#include "comm/backends/ucx/mailboxes.hpp"
#include "comm/reduce_op.hpp"

namespace dtrain::comm::ucx {

class LocalAllreduce final : public ImmediateAllreduce {
 public:
  // Publishes this rank's contribution (`sequence` is not needed: the
  // mailboxes number their own operations).
  void start(const Group& group, std::uint64_t sequence, const TensorView& send, const TensorView& recv,
             ReduceOp op) override;
  // Reduces once every contribution is there.
  bool advance() override;
  Outcome outcome() const override { return outcome_; }
  // Nothing is ever in flight: a rank only writes its own mailbox.
  bool quiescent() const override { return true; }
  // Whether `peer`'s contribution is still awaited.
  bool involves(int peer) const override;
  // The first rank whose contribution has not arrived.
  int waiting_on() const override;
  // Every rank whose contribution has not arrived.
  std::vector<int> missing() const;
  int cancel(Transport&) override { return -1; }
  bool polled() const override { return true; }

  // Whether every contribution is there. Remembers how far it got, so each
  // peer's stamp is looked at until it is seen.
  bool arrived() const;
  // Whether it can end: every contribution is there, or the first one
  // missing is from a peer that is gone (a contribution it made before
  // going still counts, as a message it sent would).
  bool settled() const { return arrived() || group_.transport->gone(next_); }
  // Once settled: checks that the ranks agree and reduces into the receive
  // buffer, or fails naming the peer that is gone.
  void finish();

 private:
  const Mailboxes& mailboxes() const { return *group_.mailboxes; }

  Group group_;
  Combine combine_{ReduceOp::sum, DType::f32};
  ReduceOp op_ = ReduceOp::sum;
  DType dtype_ = DType::f32;
  std::int64_t count_ = 0;
  std::uint32_t bytes_ = 0;
  std::byte* out_ = nullptr;
  std::uint64_t stamp_ = 0;
  mutable int next_ = 0;  // ranks below it have contributed
  bool over_ = false;
  Outcome outcome_;
};

}  // namespace dtrain::comm::ucx
