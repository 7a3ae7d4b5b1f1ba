// Blockwise attention on either device: a block of queries against a block
// of keys and values, forward and backward, and the merge of partial results
// by their log-sum-exps (what each computes: dtrain/cp.h, "What attention
// computes"). Context parallelism builds ring and all-to-all attention from
// these calls.
//
// Arrays are float32 and laid out as dtrain/cp.h says: q, o and their
// gradients [q_rows, q_heads, head_dim], k, v and theirs [kv_rows, kv_heads,
// head_dim], lse and delta [q_rows, q_heads], all row-major; positions are
// int64. Every pointer is in the Queue's memory and the work is queued on
// it: on the host it has run when the call returns (OpenBLAS and the loops
// of device/cpu/attention.hpp), on a CUDA device it runs on the Queue's
// stream (cuBLAS and the kernels of device/cuda/attention.hpp). Callers
// check shapes (parallel/cp/arguments.hpp); outputs must not overlap inputs.
//
// Precision: products in float32 (accumulated by the BLAS), softmax
// statistics and merges summed in double, so that a sequence split into
// blocks gives what one block over the whole sequence gives, to float
// rounding.
#pragma once

#include <cstdint>

#include "device/queue.hpp"

namespace dtrain::device {

struct AttentionShape {
  std::int64_t q_rows = 0;
  std::int64_t kv_rows = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;  // divides q_heads
  std::int64_t head_dim = 0;
  bool causal = false;
  double scale = 0.0;  // resolved: positive
};

// The global positions of a block's tokens ([q_rows] and [kv_rows]), read
// only when the shape is causal: key j is visible to query i when
// k[j] <= q[i].
struct AttentionPositions {
  const std::int64_t* q = nullptr;
  const std::int64_t* k = nullptr;
};

// o and lse of the queries against this block alone; a query that sees no
// key gets o = 0, lse = -inf.
void attention_forward(Queue& queue, const AttentionShape& shape, const float* q, const float* k, const float* v,
                       AttentionPositions positions, float* o, float* lse);

// (o, lse) := the merge of (o, lse) and (o_other, lse_other) by log-sum-exp
// (dt_cp_attention_merge); where both lse are -inf, o = 0.
void attention_merge(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o,
                     float* lse, const float* o_other, const float* lse_other);

// delta[i, h] = sum_c d_o[i, h, c] * o[i, h, c]: the term of the softmax
// gradient that needs the whole row, computed once before the blocks.
void attention_output_dot(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim,
                          const float* d_o, const float* o, float* delta);

// What the backward pass reads: the forward pass's inputs, the gradient of
// its output, the final lse of each whole row and delta.
struct AttentionGradientInputs {
  const float* q;
  const float* k;
  const float* v;
  const float* d_o;
  const float* lse;
  const float* delta;
};

// Adds this block's contributions to dq, dk and dv, recomputing the
// probabilities from the final lse of the whole row:
//   p = exp(score - lse), dv += p^T d_o, ds = p (d_o v^T - delta) scale,
//   dq += ds k, dk += ds^T q.
void attention_backward(Queue& queue, const AttentionShape& shape, const AttentionGradientInputs& in,
                        AttentionPositions positions, float* dq, float* dk, float* dv);

}  // namespace dtrain::device
