#include "parallel/cp/ring.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "parallel/cp/timeline.hpp"
#include "parallel/cp/transfer.hpp"

namespace dtrain::parallel::cp {

namespace {

// Keys and values travel as one message: [k; v].
class KeyValueRing {
 public:
  KeyValueRing(comm::Communicator& comm, const AttentionShape& shape, const float* k, const float* v)
      : comm_(comm), block_(shape.kv_rows * shape.kv_heads * shape.head_dim),
        current_(static_cast<std::size_t>(2 * block_)), next_(current_.size()) {
    std::copy(k, k + block_, current_.begin());
    std::copy(v, v + block_, current_.begin() + block_);
  }

  const float* k() const { return current_.data(); }
  const float* v() const { return current_.data() + block_; }

  // Starts passing the current block on and receiving the next one.
  void start_shift(int tag) {
    const int size = comm_.size();
    const int rank = comm_.rank();
    receiving_.emplace(comm_, Transfer::Direction::receive, next_.data(), 2 * block_, (rank + size - 1) % size, tag);
    sending_.emplace(comm_, Transfer::Direction::send, current_.data(), 2 * block_, (rank + 1) % size, tag);
  }

  // Waits for the shift started last; the received block becomes current.
  void finish_shift() {
    receiving_->wait();
    sending_->wait();
    receiving_.reset();
    sending_.reset();
    current_.swap(next_);
  }

 private:
  comm::Communicator& comm_;
  std::int64_t block_;
  std::vector<float> current_;
  std::vector<float> next_;
  std::optional<Transfer> receiving_;
  std::optional<Transfer> sending_;
};

// The rank whose block a rank holds after `step` shifts.
int owner_at(const comm::Communicator& comm, int step) { return (comm.rank() - step + comm.size()) % comm.size(); }

// Tags: the key/value shift of step s uses s, the gradient accumulators'
// shift after step s uses size + s, so no two messages between a pair of
// ranks in one call share a tag.
int accumulator_tag(const comm::Communicator& comm, int step) { return comm.size() + step; }

}  // namespace

void ring_attention_forward(comm::Communicator& comm, SequenceLayout layout, const AttentionShape& shape,
                            const float* q, const float* k, const float* v, float* o, float* lse) {
  const int size = comm.size();
  const std::vector<std::int64_t> q_positions = global_positions(layout, size, comm.rank(), shape.q_rows);
  const std::int64_t o_count = shape.q_rows * shape.q_heads * shape.head_dim;
  const std::int64_t lse_count = shape.q_rows * shape.q_heads;
  std::vector<float> block_o(static_cast<std::size_t>(o_count));
  std::vector<float> block_lse(static_cast<std::size_t>(lse_count));
  const RingTimeline timeline(comm, layout, RingTimeline::Pass::forward);
  KeyValueRing ring(comm, shape, k, v);
  for (int step = 0; step < size; ++step) {
    const bool last = step == size - 1;
    if (!last) ring.start_shift(step);
    const std::int64_t started = RingTimeline::now();
    const std::vector<std::int64_t> k_positions = global_positions(layout, size, owner_at(comm, step), shape.kv_rows);
    const BlockPositions positions{q_positions.data(), k_positions.data()};
    if (step == 0) {
      attention_forward(shape, q, ring.k(), ring.v(), positions, o, lse);
    } else {
      attention_forward(shape, q, ring.k(), ring.v(), positions, block_o.data(), block_lse.data());
      merge_attention(shape.q_rows, shape.q_heads, shape.head_dim, o, lse, block_o.data(), block_lse.data());
    }
    timeline.block(step, owner_at(comm, step), started);
    if (!last) timeline.wait(RingTimeline::Wait::keys_values, step, [&] { ring.finish_shift(); });
  }
}

void ring_attention_backward(comm::Communicator& comm, SequenceLayout layout, const AttentionShape& shape,
                             const GradientInputs& in, float* dq, float* dk, float* dv) {
  const int size = comm.size();
  const int rank = comm.rank();
  const std::vector<std::int64_t> q_positions = global_positions(layout, size, rank, shape.q_rows);
  const std::int64_t kv_count = shape.kv_rows * shape.kv_heads * shape.head_dim;
  std::vector<float> delta(static_cast<std::size_t>(shape.q_rows * shape.q_heads));
  output_gradient_dot(shape.q_rows, shape.q_heads, shape.head_dim, in.d_o, in.o, delta.data());
  std::fill(dq, dq + shape.q_rows * shape.q_heads * shape.head_dim, 0.0F);
  std::fill(dk, dk + kv_count, 0.0F);
  std::fill(dv, dv + kv_count, 0.0F);

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
    attention_backward(part,
                       {in.q + q_offset, in.k, in.v, in.d_o + q_offset, in.lse + lse_offset, delta.data() + lse_offset},
                       {q_positions.data() + first, q_positions.data()}, dq + q_offset, dk, dv);
    timeline.block(step, rank, started);
  };

  KeyValueRing ring(comm, shape, in.k, in.v);
  if (size > 1) ring.start_shift(0);
  own_block(0, 0, first_half);

  // Accumulators [dk; dv] of the other ranks' blocks: the block held at step
  // s gets its first contribution here at s = 1, or arrives with what the
  // ranks before added; this rank's is computed into one of two buffers (the
  // other may still be on its way to the next rank) while theirs arrives
  // into `incoming`. After step size - 1 the next rank is the block's owner.
  std::vector<float> own[2] = {std::vector<float>(static_cast<std::size_t>(2 * kv_count)),
                               std::vector<float>(static_cast<std::size_t>(2 * kv_count))};
  std::vector<float> incoming(static_cast<std::size_t>(2 * kv_count));
  std::optional<Transfer> accumulator_sent;
  const int next = (rank + 1) % size;
  const int previous = (rank + size - 1) % size;
  for (int step = 1; step < size; ++step) {
    timeline.wait(RingTimeline::Wait::keys_values, step - 1, [&] { ring.finish_shift(); });
    if (step < size - 1) ring.start_shift(step);
    std::optional<Transfer> accumulator_in;
    if (step > 1) {
      accumulator_in.emplace(comm, Transfer::Direction::receive, incoming.data(), 2 * kv_count, previous,
                             accumulator_tag(comm, step - 1));
    }
    std::vector<float>& mine = own[step % 2];
    const std::int64_t started = RingTimeline::now();
    std::fill(mine.begin(), mine.end(), 0.0F);
    const std::vector<std::int64_t> k_positions = global_positions(layout, size, owner_at(comm, step), shape.kv_rows);
    attention_backward(shape, {in.q, ring.k(), ring.v(), in.d_o, in.lse, delta.data()},
                       {q_positions.data(), k_positions.data()}, dq, mine.data(), mine.data() + kv_count);
    timeline.block(step, owner_at(comm, step), started);
    if (accumulator_in) {
      timeline.wait(RingTimeline::Wait::accumulator, step, [&] { accumulator_in->wait(); });
      std::transform(mine.begin(), mine.end(), incoming.begin(), mine.begin(), std::plus<>());
    }
    if (accumulator_sent) timeline.wait(RingTimeline::Wait::accumulator, step, [&] { accumulator_sent->wait(); });
    accumulator_sent.emplace(comm, Transfer::Direction::send, mine.data(), 2 * kv_count, next,
                             accumulator_tag(comm, step));
  }

  std::optional<Transfer> home;
  if (size > 1) {
    home.emplace(comm, Transfer::Direction::receive, incoming.data(), 2 * kv_count, previous,
                 accumulator_tag(comm, size - 1));
  }
  own_block(size, first_half, shape.q_rows - first_half);
  if (home) {
    timeline.wait(RingTimeline::Wait::accumulator, size, [&] {
      home->wait();
      accumulator_sent->wait();
    });
    std::transform(dk, dk + kv_count, incoming.begin(), dk, std::plus<>());
    std::transform(dv, dv + kv_count, incoming.begin() + kv_count, dv, std::plus<>());
  }
}

}  // namespace dtrain::parallel::cp
