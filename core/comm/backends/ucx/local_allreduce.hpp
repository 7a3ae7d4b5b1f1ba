// An allreduce through the ranks' mailboxes (mailboxes.hpp), for
// communicators whose ranks all run on one host. Each rank writes its
// contribution to its own mailbox (a buffer larger than the mailboxes in
// pieces, one operation each); once every peer's is there:
//  - small buffers: each rank reduces all of them, in rank order;
//  - larger ones (kSplitBytes): each rank reduces one segment (segment(),
//    chunks.hpp), its own values first, then its peers' in rank order, and
//    puts it in the result part of its mailbox; once every segment is
//    there, it copies them out. Each rank reads about twice the buffer
//    instead of reducing all of it; one more step. Its own segment it takes
//    from the send buffer, so the contribution leaves it out.
// Either way every rank gets the same bits, which depend only on the size,
// the ranks and the mailboxes' capacity. How a rank writes its mailbox is
// its own choice (handoff.hpp). No message, where the schedules over UCX
// take log2(n) rounds or more, each a copy in and out of UCX's queues.
//
// The engine runs it for callers that wait at once (immediate_collective.hpp);
// local_allreduce() schedules it as an Operation for the
// others. Ranks on either path match: both take the next mailbox stamp in the
// order of collectives. Ranks that disagree about the size, the dtype or the
// reduction get DT_ERR_MISMATCH.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/tensor.hpp"
#include "comm/backends/ucx/local_collective.hpp"
#include "comm/backends/ucx/mailboxes.hpp"
#include "comm/reduce_op.hpp"
#include "comm/schedules/combine.hpp"

namespace dtrain::comm::ucx {

class LocalAllreduce final : public LocalCollective {
 public:
  // From this size on, the ranks split the reduction.
  static constexpr std::size_t kSplitBytes = 16 * 1024;
  // The largest buffer it takes (the header records its size in 32 bits).
  static constexpr std::size_t kMaxBytes = UINT32_MAX;

 private:
  // `sequence` is not needed: the mailboxes number their own operations.
  void prepare(std::uint64_t sequence, const Collective& allreduce) override;
  // Publishes this rank's contribution.
  void begin() override { begin_piece(0); }
  // Takes every step whose parts are there.
  Progress step() override;
  Mailboxes::Part awaited() const override {
    return gathering_ ? Mailboxes::Part::result : Mailboxes::Part::contribution;
  }
  // Publishes the piece that starts at element `first`.
  void begin_piece(std::int64_t first);
  // The steps, once every part is there.
  void reduce();
  void gather();
  // The piece is done: begins the next one, if any.
  void end_piece();

  Combine combine_{ReduceOp::sum, DType::f32};
  ReduceOp op_ = ReduceOp::sum;
  DType dtype_ = DType::f32;
  std::uint32_t size_ = 0;  // bytes of the whole buffer
  const std::byte* send_ = nullptr;
  std::byte* recv_ = nullptr;
  std::int64_t total_ = 0;        // elements of the whole buffer
  std::int64_t piece_limit_ = 0;  // elements a piece holds at most
  std::int64_t first_ = 0;        // the current piece: its first element,
  std::int64_t count_ = 0;        // its length,
  std::byte* out_ = nullptr;      // and where its result goes
  bool split_ = false;      // each rank reduces one segment
  bool gathering_ = false;  // the segments are reduced: waiting for them
};

// The allreduce as an Operation the engine schedules, on the engine's `group`.
std::unique_ptr<Operation> local_allreduce(Collective allreduce, const Group& group);

}  // namespace dtrain::comm::ucx
