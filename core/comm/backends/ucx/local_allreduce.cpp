#include "comm/backends/ucx/local_allreduce.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/ucx/handoff.hpp"
#include "comm/backends/ucx/scheduled_local.hpp"
#include "comm/schedules/chunks.hpp"
#include "device/cpu/stream_copy.hpp"

namespace dtrain::comm::ucx {

namespace {

std::uint32_t kind_of(DType dtype, ReduceOp op) { return Mailboxes::kind_code(CallKind::allreduce, dtype, op); }

std::string describe(std::uint32_t bytes, std::uint32_t kind) {
  if (Mailboxes::call_of(kind) != CallKind::allreduce) return std::string("to ") + call_kind_name(Mailboxes::call_of(kind));
  return std::to_string(bytes) + " bytes of " + dtype_name(Mailboxes::dtype_of(kind)) + " " +
         reduce_op_name(Mailboxes::op_of(kind));
}

// A result this large leaves the caches before anyone reads it (the ranks'
// buffers together outgrow the last level): streaming it into the receive
// buffer spares reading in each line only to overwrite it: 0.82-0.89 of
// the time from 16 MiB in paired runs at 2 ranks, but slower at 8 MiB,
// where the buffers still fit.
constexpr std::size_t kStreamResultsFrom = 16 << 20;

void copy_cached(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

}  // namespace

void LocalAllreduce::prepare(std::uint64_t, const Collective& allreduce) {
  const TensorView& send = allreduce.send;
  const TensorView& recv = allreduce.recv;
  const ReduceOp op = allreduce.op;
  combine_ = Combine(op, recv.dtype);
  op_ = op;
  dtype_ = recv.dtype;
  size_ = static_cast<std::uint32_t>(recv.bytes());
  send_ = static_cast<const std::byte*>(send.data);
  recv_ = static_cast<std::byte*>(recv.data);
  total_ = recv.count;
  // At least one element: share_memory() makes sure of it (Mailboxes::kLeastCapacity).
  piece_limit_ = static_cast<std::int64_t>(group_.mailboxes->shared_capacity() / dtype_size(dtype_));
}

void LocalAllreduce::begin_piece(std::int64_t first) {
  const std::size_t element = dtype_size(dtype_);
  first_ = first;
  count_ = std::min(piece_limit_, total_ - first);
  out_ = recv_ + static_cast<std::size_t>(first) * element;
  split_ = static_cast<std::size_t>(count_) * element >= kSplitBytes && count_ >= group_.size;
  gathering_ = false;
  next_ = 0;
  // Peers read all of the contribution but, where the ranks split the
  // reduction, this rank's own segment: it reduces that from the send buffer
  // itself. In place, the pieces before this one have written only their own
  // part of the buffer.
  const Range own = split_ ? segment(count_, group_.size, group_.rank) : Range{count_, 0};
  const std::byte* values = send_ + static_cast<std::size_t>(first) * element;
  std::byte* area = group_.mailboxes->contribution_area();
  const std::size_t after = static_cast<std::size_t>(own.first + own.count) * element;
  const std::size_t bytes = static_cast<std::size_t>(count_) * element;
  Handoff& handoff = group_.mailboxes->handoff();
  if (own.first > 0) handoff.copy(area, values, static_cast<std::size_t>(own.first) * element, bytes);
  if (bytes > after) handoff.copy(area + after, values + after, bytes - after, bytes);
  stamp_ = group_.mailboxes->publish(size_, kind_of(dtype_, op_));
}

void LocalAllreduce::end_piece() {
  if (first_ + count_ < total_) {
    begin_piece(first_ + count_);
  } else {
    over_ = true;
  }
}

ImmediateCollective::Progress LocalAllreduce::step() {
  Progress progress = Progress::none;
  // One piece at most: the engine's lock is held meanwhile, and its caller
  // checks the deadline, aborts and peers between calls.
  for (const std::int64_t piece = first_; !over_ && first_ == piece && ready(); progress = Progress::some) {
    if (!arrived()) {
      lose_missing_peer();
    } else if (gathering_) {
      gather();
    } else {
      reduce();
    }
  }
  return over_ ? Progress::over : progress;
}

void LocalAllreduce::reduce() {
  const std::uint32_t kind = kind_of(dtype_, op_);
  for (int r = 0; r < group_.size; ++r) {
    const Mailboxes::Header* slot = mailboxes().arrived(r, stamp_);
    if (slot->size != size_ || slot->kind != kind) {
      fail(DT_ERR_MISMATCH, describe_rank(group_, r) + " contributed " + describe(slot->size, slot->kind) +
                                ", this rank " + describe(size_, kind) +
                                " (do all ranks pass the same counts, dtypes and reductions?)");
      return;
    }
  }
  const std::size_t element = dtype_size(dtype_);
  const Range whole{0, count_};
  const Range mine = split_ ? segment(count_, group_.size, group_.rank) : whole;
  const std::size_t offset = static_cast<std::size_t>(mine.first) * element;
  const auto from = [&](int r) { return Mailboxes::data(mailboxes().arrived(r, stamp_)) + offset; };
  // Results streamed out (kStreamResultsFrom) are reduced into the mailbox
  // and copied from there; not when the peers' cores are far, where writing
  // the mailbox through the cache costs more than reading the receive buffer
  // in.
  Handoff& handoff = group_.mailboxes->handoff();
  const bool stream_out = split_ && size_ >= kStreamResultsFrom && !handoff.far();
  std::byte* result = split_ ? group_.mailboxes->result_area(stamp_) : nullptr;
  std::byte* into = stream_out ? result : out_ + offset;
  if (mine.count > 0 && split_) {
    // This rank alone computes its segment, beginning with its own values
    // from the send buffer (which may be the receive buffer: apply() takes
    // dst == a), then its peers' in rank order.
    const std::byte* own = send_ + static_cast<std::size_t>(first_) * element + offset;
    const int first_peer = group_.rank == 0 ? 1 : 0;
    combine_.apply(into, own, from(first_peer), mine.count);
    for (int r = first_peer + 1; r < group_.size; ++r) {
      if (r != group_.rank) combine_.apply(into, from(r), mine.count);
    }
  } else if (mine.count > 0) {
    // Every rank computes every element, so all reduce in rank order to get
    // the same bits, reading their own values from their mailbox too: the
    // receive buffer may be the send buffer.
    combine_.apply(into, from(0), from(1), mine.count);
    for (int r = 2; r < group_.size; ++r) combine_.apply(into, from(r), mine.count);
  }
  if (mine.count > 0) combine_.finish(into, mine.count, group_.size);
  if (!split_) {
    end_piece();
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(mine.count) * element;
  if (stream_out) {
    device::cpu::stream_copy(out_ + offset, result, bytes);
  } else {
    handoff.copy(result, into, bytes, static_cast<std::size_t>(count_) * element);
  }
  group_.mailboxes->publish_result(stamp_);
  gathering_ = true;
  next_ = 0;
}

void LocalAllreduce::gather() {
  const auto copy = size_ >= kStreamResultsFrom ? device::cpu::stream_copy : copy_cached;
  const std::size_t element = dtype_size(dtype_);
  for (int r = 0; r < group_.size; ++r) {
    if (r == group_.rank) continue;
    const Range theirs = segment(count_, group_.size, r);
    copy(out_ + static_cast<std::size_t>(theirs.first) * element,
         Mailboxes::data(mailboxes().arrived(r, stamp_, Mailboxes::Part::result)),
         static_cast<std::size_t>(theirs.count) * element);
  }
  end_piece();
}

std::unique_ptr<Operation> local_allreduce(Collective allreduce, const Group& group) {
  return std::make_unique<ScheduledLocal<LocalAllreduce>>(std::move(allreduce), group);
}

}  // namespace dtrain::comm::ucx
