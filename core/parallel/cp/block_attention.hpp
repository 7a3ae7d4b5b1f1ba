// Attention of a block of queries against a block of keys and values, on
// float32 host arrays laid out as dtrain/cp.h says ([rows, heads, head_dim]
// row-major; lse [rows, heads]), forward and backward, and the merge of
// partial results by their log-sum-exps. Ring and all-to-all attention are
// built from these. The products run per head on the device layer's GEMM
// (OpenBLAS); softmax statistics and merges are summed in double, so that a
// sequence split into blocks gives what one block over the whole sequence
// gives, to float rounding. With a causal mask, queries and keys are taken
// in runs of increasing positions (a layout's chunks), and the products of
// a run of queries with a run of keys that all come after them are skipped.
#pragma once

#include <cstdint>

namespace dtrain::parallel::cp {

struct AttentionShape {
  std::int64_t q_rows = 0;
  std::int64_t kv_rows = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;  // divides q_heads
  std::int64_t head_dim = 0;
  bool causal = false;
  double scale = 0.0;  // resolved: positive

  bool operator==(const AttentionShape&) const = default;
};

// Positions of a block's tokens; read only when the shape is causal, where
// key j is visible to query i when k[j] <= q[i].
struct BlockPositions {
  const std::int64_t* q = nullptr;
  const std::int64_t* k = nullptr;
};

// o [q_rows, q_heads, head_dim] and lse [q_rows, q_heads] of the queries
// against this block alone (dtrain/cp.h); a query that sees no key gets
// o = 0, lse = -inf.
void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                       BlockPositions positions, float* o, float* lse);

// (o, lse) := the merge of (o, lse) and (o_other, lse_other) by log-sum-exp.
void merge_attention(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o, float* lse,
                     const float* o_other, const float* lse_other);

// delta[i, h] = sum_c d_o[i, h, c] * o[i, h, c]: the term of the softmax
// gradient that needs the whole row, computed once before the blocks.
void output_gradient_dot(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, const float* d_o,
                         const float* o, float* delta);

// Adds this block's contributions to dq, dk and dv, recomputing the
// probabilities from the final lse of the whole row:
//   p = exp(score - lse), dv += p d_o, ds = p (d_o . v - delta),
//   dq += scale ds k, dk += scale ds q.
struct BackwardInputs {
  const float* q;
  const float* k;
  const float* v;
  const float* d_o;
  const float* lse;
  const float* delta;
};
void attention_backward(const AttentionShape& shape, const BackwardInputs& in, BlockPositions positions, float* dq,
                        float* dk, float* dv);

}  // namespace dtrain::parallel::cp
