#include "parallel/cp/ulysses.hpp"

#include <cstdint>

#include "device/buffer.hpp"

namespace dtrain::parallel::cp {

namespace {

constexpr std::size_t kFloat = sizeof(float);

// Floats in the Queue's memory.
class Floats {
 public:
  Floats(device::Queue& queue, std::int64_t count)
      : buffer_(queue, static_cast<std::size_t>(count) * kFloat), count_(count) {}

  float* data() const { return static_cast<float*>(buffer_.data()); }
  std::int64_t count() const { return count_; }
  TensorView view() const { return buffer_.view(0, count_, DType::f32); }

 private:
  device::Buffer buffer_;
  std::int64_t count_;
};

// Moves [rows, heads, width] arrays between the sequence-sharded and the
// head-sharded arrangement over a group of `parts` ranks.
class HeadExchange {
 public:
  HeadExchange(comm::Communicator& comm, device::Queue& queue, std::int64_t rows)
      : comm_(comm), queue_(queue), rows_(rows) {}

  // This rank's [rows, heads, width] → [parts * rows, heads / parts, width]:
  // every rank's rows (rank 0's first) of this rank's share of the heads.
  Floats to_heads(const float* local, std::int64_t heads, std::int64_t width) const {
    const std::int64_t share = heads / comm_.size() * width;
    const Floats send(queue_, rows_ * heads * width);
    // Chunk j of the send buffer, for rank j, is [rows, heads / parts, width].
    for (int j = 0; j < comm_.size(); ++j) {
      queue_.copy_rows(send.data() + j * rows_ * share, share * kFloat, local + j * share, heads * width * kFloat,
                       share * kFloat, rows_);
    }
    return exchange(send);
  }

  // The reverse: [parts * rows, heads / parts, width] of this rank's heads →
  // this rank's rows of every head, into `local` [rows, heads, width].
  void to_rows(const Floats& gathered, std::int64_t heads, std::int64_t width, float* local) const {
    const std::int64_t share = heads / comm_.size() * width;
    const Floats received = exchange(gathered);
    // Chunk j of what arrives is rank j's heads of this rank's rows.
    for (int j = 0; j < comm_.size(); ++j) {
      queue_.copy_rows(local + j * share, heads * width * kFloat, received.data() + j * rows_ * share, share * kFloat,
                       share * kFloat, rows_);
    }
  }

 private:
  Floats exchange(const Floats& send) const {
    Floats received(queue_, send.count());
    comm::start_and_wait(comm_, [&] { return comm_.alltoall(send.view(), received.view()); });
    return received;
  }

  comm::Communicator& comm_;
  device::Queue& queue_;
  std::int64_t rows_;
};

// The attention of this rank's heads over the whole sequence, as the
// all-to-all arranges it: every rank's rows in rank order.
AttentionShape head_shard(const AttentionShape& shape, int parts) {
  AttentionShape whole = shape;
  whole.q_rows = shape.q_rows * parts;
  whole.kv_rows = shape.kv_rows * parts;
  whole.q_heads = shape.q_heads / parts;
  whole.kv_heads = shape.kv_heads / parts;
  return whole;
}

}  // namespace

void ulysses_attention_forward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                               const AttentionShape& shape, const float* q, const float* k, const float* v, float* o,
                               float* lse) {
  const int parts = comm.size();
  const AttentionShape whole = head_shard(shape, parts);
  const HeadExchange exchange(comm, queue, shape.q_rows);
  const Floats q_heads = exchange.to_heads(q, shape.q_heads, shape.head_dim);
  const Floats k_heads = exchange.to_heads(k, shape.kv_heads, shape.head_dim);
  const Floats v_heads = exchange.to_heads(v, shape.kv_heads, shape.head_dim);
  const SequencePositions positions(queue, layout, parts, shape.q_rows);
  const Floats o_heads(queue, q_heads.count());
  const Floats lse_heads(queue, whole.q_rows * whole.q_heads);
  device::attention_forward(queue, whole, q_heads.data(), k_heads.data(), v_heads.data(),
                            {positions.all(), positions.all()}, o_heads.data(), lse_heads.data());
  exchange.to_rows(o_heads, shape.q_heads, shape.head_dim, o);
  exchange.to_rows(lse_heads, shape.q_heads, 1, lse);
}

void ulysses_attention_backward(comm::Communicator& comm, device::Queue& queue, SequenceLayout layout,
                                const AttentionShape& shape, const GradientInputs& in, float* dq, float* dk,
                                float* dv) {
  const int parts = comm.size();
  const AttentionShape whole = head_shard(shape, parts);
  const HeadExchange exchange(comm, queue, shape.q_rows);
  // delta needs whole rows of o: computed before the exchange, which then
  // carries it instead of o (head_dim times smaller).
  const Floats delta(queue, shape.q_rows * shape.q_heads);
  device::attention_output_dot(queue, shape.q_rows, shape.q_heads, shape.head_dim, in.d_o, in.o, delta.data());
  const Floats q_heads = exchange.to_heads(in.q, shape.q_heads, shape.head_dim);
  const Floats k_heads = exchange.to_heads(in.k, shape.kv_heads, shape.head_dim);
  const Floats v_heads = exchange.to_heads(in.v, shape.kv_heads, shape.head_dim);
  const Floats d_o_heads = exchange.to_heads(in.d_o, shape.q_heads, shape.head_dim);
  const Floats lse_heads = exchange.to_heads(in.lse, shape.q_heads, 1);
  const Floats delta_heads = exchange.to_heads(delta.data(), shape.q_heads, 1);
  const SequencePositions positions(queue, layout, parts, shape.q_rows);
  const Floats dq_heads(queue, q_heads.count());
  const Floats dk_heads(queue, k_heads.count());
  const Floats dv_heads(queue, v_heads.count());
  device::attention_backward(queue, whole,
                             {q_heads.data(), k_heads.data(), v_heads.data(), d_o_heads.data(), lse_heads.data(),
                              delta_heads.data()},
                             {positions.all(), positions.all()}, dq_heads.data(), dk_heads.data(), dv_heads.data());
  exchange.to_rows(dq_heads, shape.q_heads, shape.head_dim, dq);
  exchange.to_rows(dk_heads, shape.kv_heads, shape.head_dim, dk);
  exchange.to_rows(dv_heads, shape.kv_heads, shape.head_dim, dv);
}

}  // namespace dtrain::parallel::cp
