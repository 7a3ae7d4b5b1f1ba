#include "parallel/cp/ulysses.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>


namespace dtrain::parallel::cp {

namespace {

using Floats = std::vector<float>;

// Moves [rows, heads, width] arrays between the sequence-sharded and the
// head-sharded arrangement over a group of `parts` ranks.
class HeadExchange {
 public:
  HeadExchange(comm::Communicator& comm, std::int64_t rows) : comm_(comm), rows_(rows) {}

  // This rank's [rows, heads, width] → [parts * rows, heads / parts, width]:
  // every rank's rows (rank 0's first) of this rank's share of the heads.
  Floats to_heads(const float* local, std::int64_t heads, std::int64_t width) const {
    const std::int64_t share = heads / comm_.size() * width;
    Floats send(static_cast<std::size_t>(rows_ * heads * width));
    // Chunk j of the send buffer, for rank j, is [rows, heads / parts, width].
    for (int j = 0; j < comm_.size(); ++j) {
      for (std::int64_t r = 0; r < rows_; ++r) {
        const float* from = local + r * heads * width + j * share;
        std::copy(from, from + share, send.begin() + (j * rows_ + r) * share);
      }
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
      for (std::int64_t r = 0; r < rows_; ++r) {
        const float* from = received.data() + (j * rows_ + r) * share;
        std::copy(from, from + share, local + r * heads * width + j * share);
      }
    }
  }

 private:
  Floats exchange(const Floats& send) const {
    Floats received(send.size());
    const auto count = static_cast<std::int64_t>(send.size());
    const TensorView send_view = host_view(const_cast<float*>(send.data()), count, DType::f32);
    const TensorView recv_view = host_view(received.data(), count, DType::f32);
    comm::start_and_wait(comm_, [&] { return comm_.alltoall(send_view, recv_view); });
    return received;
  }

  comm::Communicator& comm_;
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

// The positions of the gathered rows: every rank's, in rank order.
std::vector<std::int64_t> gathered_positions(SequenceLayout layout, int parts, std::int64_t rows) {
  std::vector<std::int64_t> positions;
  for (int r = 0; r < parts; ++r) {
    const auto of_rank = global_positions(layout, parts, r, rows);
    positions.insert(positions.end(), of_rank.begin(), of_rank.end());
  }
  return positions;
}

}  // namespace

void ulysses_attention_forward(comm::Communicator& comm, SequenceLayout layout, const AttentionShape& shape,
                               const float* q, const float* k, const float* v, float* o, float* lse) {
  const int parts = comm.size();
  const AttentionShape whole = head_shard(shape, parts);
  const HeadExchange exchange(comm, shape.q_rows);
  const Floats q_heads = exchange.to_heads(q, shape.q_heads, shape.head_dim);
  const Floats k_heads = exchange.to_heads(k, shape.kv_heads, shape.head_dim);
  const Floats v_heads = exchange.to_heads(v, shape.kv_heads, shape.head_dim);
  const auto positions = gathered_positions(layout, parts, shape.q_rows);
  Floats o_heads(q_heads.size());
  Floats lse_heads(static_cast<std::size_t>(whole.q_rows * whole.q_heads));
  attention_forward(whole, q_heads.data(), k_heads.data(), v_heads.data(), {positions.data(), positions.data()},
                    o_heads.data(), lse_heads.data());
  exchange.to_rows(o_heads, shape.q_heads, shape.head_dim, o);
  exchange.to_rows(lse_heads, shape.q_heads, 1, lse);
}

void ulysses_attention_backward(comm::Communicator& comm, SequenceLayout layout, const AttentionShape& shape,
                                const GradientInputs& in, float* dq, float* dk, float* dv) {
  const int parts = comm.size();
  const AttentionShape whole = head_shard(shape, parts);
  const HeadExchange exchange(comm, shape.q_rows);
  // delta needs whole rows of o: computed before the exchange, which then
  // carries it instead of o (head_dim times smaller).
  Floats delta(static_cast<std::size_t>(shape.q_rows * shape.q_heads));
  output_gradient_dot(shape.q_rows, shape.q_heads, shape.head_dim, in.d_o, in.o, delta.data());
  const Floats q_heads = exchange.to_heads(in.q, shape.q_heads, shape.head_dim);
  const Floats k_heads = exchange.to_heads(in.k, shape.kv_heads, shape.head_dim);
  const Floats v_heads = exchange.to_heads(in.v, shape.kv_heads, shape.head_dim);
  const Floats d_o_heads = exchange.to_heads(in.d_o, shape.q_heads, shape.head_dim);
  const Floats lse_heads = exchange.to_heads(in.lse, shape.q_heads, 1);
  const Floats delta_heads = exchange.to_heads(delta.data(), shape.q_heads, 1);
  const auto positions = gathered_positions(layout, parts, shape.q_rows);
  Floats dq_heads(q_heads.size(), 0.0F);
  Floats dk_heads(k_heads.size(), 0.0F);
  Floats dv_heads(v_heads.size(), 0.0F);
  attention_backward(whole,
                     {q_heads.data(), k_heads.data(), v_heads.data(), d_o_heads.data(), lse_heads.data(),
                      delta_heads.data()},
                     {positions.data(), positions.data()}, dq_heads.data(), dk_heads.data(), dv_heads.data());
  exchange.to_rows(dq_heads, shape.q_heads, shape.head_dim, dq);
  exchange.to_rows(dk_heads, shape.kv_heads, shape.head_dim, dk);
  exchange.to_rows(dv_heads, shape.kv_heads, shape.head_dim, dv);
}

}  // namespace dtrain::parallel::cp
