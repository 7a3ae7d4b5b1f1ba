#include "parallel/cp/ring.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "device/buffer.hpp"
#include "parallel/cp/timeline.hpp"
#include "parallel/cp/transfer.hpp"

namespace dtrain::parallel::cp {

namespace {

constexpr std::size_t kFloat = sizeof(float);

// The queue the ring's messages travel on: on a CUDA device a stream of
// their own, so that they move while the compute queue attends.
std::unique_ptr<device::Queue> transfer_queue(const device::Queue& compute) {
  return device::make_queue(compute.memory(), compute.device_id());
}

// Keys and values travel as one message: [k; v]. Both buffers are written
// whole before they are read (the copy of k and v, a received block).
class KeyValueRing {
 public:
  KeyValueRing(comm::Communicator& comm, device::Queue& compute, device::Queue& transfers, const AttentionShape& shape,
               const float* k, const float* v)
      : comm_(comm), compute_(compute), transfers_(transfers),
        block_(shape.kv_rows * shape.kv_heads * shape.head_dim),
        current_(compute, static_cast<std::size_t>(2 * block_) * kFloat, device::Buffer::Contents::unset),
        next_(compute, current_.bytes(), device::Buffer::Contents::unset) {
    compute.copy(current_.data(), k, static_cast<std::size_t>(block_) * kFloat);
    compute.copy(current_.at(static_cast<std::size_t>(block_) * kFloat), v, static_cast<std::size_t>(block_) * kFloat);
  }

  const float* k() const { return static_cast<const float*>(current_.data()); }
  const float* v() const { return k() + block_; }

  // Starts passing the current block on and receiving the next one.
  void start_shift(int tag) {
    shift_.emplace(comm_, compute_, transfers_, k(), static_cast<float*>(next_.data()), 2 * block_, tag);
  }

  // Waits for the shift started last; the received block becomes current.
  void finish_shift() {
    shift_->wait();
    shift_.reset();
    std::swap(current_, next_);
  }

 private:
  comm::Communicator& comm_;
  device::Queue& compute_;
  device::Queue& transfers_;
  std::int64_t block_;
  device::Buffer current_;
  device::Buffer next_;
  std::optional<Shift> shift_;
};

// The rank whose block a rank holds after `step` shifts.
int owner_at(const comm::Communicator& comm, int step) { return (comm.rank() - step + comm.size()) % comm.size(); }

// Tags: the key/value shift of step s uses s, the accumulators' shift
// after step s uses size + s, so no two messages between a pair of ranks
// in one call share a tag.
int accumulator_tag(const comm::Communicator& comm, int step) { return comm.size() + step; }

}  // namespace

void ring_attention_forward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                            const AttentionShape& shape, const float* q, const float* k, const float* v, float* o,
                            float* lse) {
  const int size = comm.size();
  const SequencePositions positions(queue, layout, size, shape.q_rows);
  const auto o_bytes = static_cast<std::size_t>(shape.q_rows * shape.q_heads * shape.head_dim) * kFloat;
  const auto lse_bytes = static_cast<std::size_t>(shape.q_rows * shape.q_heads) * kFloat;
  // Written whole by each block's attention before the merge reads them.
  const device::Buffer block_o(queue, o_bytes, device::Buffer::Contents::unset);
  const device::Buffer block_lse(queue, lse_bytes, device::Buffer::Contents::unset);
  auto* other_o = static_cast<float*>(block_o.data());
  auto* other_lse = static_cast<float*>(block_lse.data());
  const RingTimeline timeline(comm, layout, RingTimeline::Pass::forward);
  const std::unique_ptr<device::Queue> transfers = transfer_queue(queue);
  KeyValueRing ring(comm, queue, *transfers, shape, k, v);
  for (int step = 0; step < size; ++step) {
    const bool last = step == size - 1;
    if (!last) ring.start_shift(step);
    const std::int64_t started = RingTimeline::now();
    const device::AttentionPositions at{positions.of_rank(comm.rank()), positions.of_rank(owner_at(comm, step))};
    if (step == 0) {
      device::attention_forward(queue, shape, q, ring.k(), ring.v(), at, o, lse);
    } else {
      device::attention_forward(queue, shape, q, ring.k(), ring.v(), at, other_o, other_lse);
      device::attention_merge(queue, shape.q_rows, shape.q_heads, shape.head_dim, o, lse, other_o, other_lse);
    }
    timeline.block(step, owner_at(comm, step), started);
    if (!last) timeline.wait(RingTimeline::Wait::keys_values, step, [&] { ring.finish_shift(); });
  }
}

void ring_attention_backward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                             const AttentionShape& shape, const GradientInputs& in, float* dq, float* dk,
                             float* dv) {
  const int size = comm.size();
  const int rank = comm.rank();
  const SequencePositions positions(queue, layout, size, shape.q_rows);
  const std::int64_t kv_count = shape.kv_rows * shape.kv_heads * shape.head_dim;
  const auto kv_bytes = static_cast<std::size_t>(kv_count) * kFloat;
  const device::Buffer deltas(queue, static_cast<std::size_t>(shape.q_rows * shape.q_heads) * kFloat,
                              device::Buffer::Contents::unset);
  auto* delta = static_cast<float*>(deltas.data());
  device::attention_output_dot(queue, shape.q_rows, shape.q_heads, shape.head_dim, in.d_o, in.o, delta);
  queue.zero(dq, static_cast<std::size_t>(shape.q_rows * shape.q_heads * shape.head_dim) * kFloat);
  queue.zero(dk, kv_bytes);
  queue.zero(dv, kv_bytes);

  // This rank's own block needs nothing from the ring, and its gradient
  // stays here: half of its queries run first, while the first block
  // arrives, and half last, while the accumulator of the own block comes
  // home, so that no transfer waits on an idle rank.
  const RingTimeline timeline(comm, layout, RingTimeline::Pass::backward);
  const std::int64_t first_half = shape.q_rows / 2;
  const auto own_block = [&](int step, std::int64_t first, std::int64_t rows) {
    if (rows == 0) return;
    const std::int64_t started = RingTimeline::now();
    AttentionShape part = shape;
    part.q_rows = rows;
    const std::int64_t q_offset = first * shape.q_heads * shape.head_dim;
    const std::int64_t lse_offset = first * shape.q_heads;
    device::attention_backward(
        queue, part, {in.q + q_offset, in.k, in.v, in.d_o + q_offset, in.lse + lse_offset, delta + lse_offset},
        {positions.of_rank(rank) + first, positions.of_rank(rank)}, dq + q_offset, dk, dv);
    timeline.block(step, rank, started);
  };

  const std::unique_ptr<device::Queue> transfers = transfer_queue(queue);
  KeyValueRing ring(comm, queue, *transfers, shape, in.k, in.v);
  if (size > 1) ring.start_shift(0);
  own_block(0, 0, first_half);

  // Accumulators [dk; dv] of the other ranks' blocks. The block held at
  // step s gets its first contribution here at s = 1, or arrives with what
  // the ranks before added: while this rank computes its contribution into
  // one of two buffers, the total of the previous step leaves from the
  // other and the next rank's total for the block held now arrives into
  // `incoming`. After step size - 1 the next rank is the block's owner.
  // Each written whole before it is read: a total zeroed at its step, what
  // arrives by its message.
  constexpr auto kUnset = device::Buffer::Contents::unset;
  const device::Buffer totals[2] = {device::Buffer(queue, 2 * kv_bytes, kUnset),
                                    device::Buffer(queue, 2 * kv_bytes, kUnset)};
  const device::Buffer incoming(queue, 2 * kv_bytes, kUnset);
  auto* arrived = static_cast<float*>(incoming.data());
  const auto total_of = [&](int step) { return static_cast<float*>(totals[step % 2].data()); };
  std::optional<Shift> accumulators;
  for (int step = 1; step < size; ++step) {
    timeline.wait(RingTimeline::Wait::keys_values, step - 1, [&] { ring.finish_shift(); });
    if (step < size - 1) ring.start_shift(step);
    if (step > 1) {
      accumulators.emplace(comm, queue, *transfers, total_of(step - 1), arrived, 2 * kv_count,
                           accumulator_tag(comm, step - 1));
    }
    float* total = total_of(step);
    const std::int64_t started = RingTimeline::now();
    queue.zero(total, 2 * kv_bytes);
    device::attention_backward(queue, shape, {in.q, ring.k(), ring.v(), in.d_o, in.lse, delta},
                               {positions.of_rank(rank), positions.of_rank(owner_at(comm, step))}, dq, total,
                               total + kv_count);
    timeline.block(step, owner_at(comm, step), started);
    if (accumulators) {
      timeline.wait(RingTimeline::Wait::accumulator, step, [&] { accumulators->wait(); });
      accumulators.reset();
      queue.add(DType::f32, total, arrived, 2 * kv_count);
    }
  }

  if (size > 1) {
    accumulators.emplace(comm, queue, *transfers, total_of(size - 1), arrived, 2 * kv_count,
                         accumulator_tag(comm, size - 1));
  }
  own_block(size, first_half, shape.q_rows - first_half);
  if (accumulators) {
    timeline.wait(RingTimeline::Wait::accumulator, size, [&] { accumulators->wait(); });
    queue.add(DType::f32, dk, arrived, kv_count);
    queue.add(DType::f32, dv, arrived + kv_count, kv_count);
  }
}

}  // namespace dtrain::parallel::cp
