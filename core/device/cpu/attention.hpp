// Blockwise attention on the CPU (what each computes: device/attention.hpp),
// on the calling thread. The products run per head on OpenBLAS through the
// device layer's GEMM; softmax statistics and merges are summed in double.
// With a causal mask, queries and keys are taken in runs of increasing
// positions (a layout's chunks), and the products of a run of queries with
// a run of keys that all come after them are skipped. Host pointers.
#pragma once

#include "device/attention.hpp"

namespace dtrain::device::cpu {

void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                       AttentionPositions positions, float* o, float* lse);
void attention_merge(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o, float* lse,
                     const float* o_other, const float* lse_other);
void attention_output_dot(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, const float* d_o,
                          const float* o, float* delta);
void attention_backward(const AttentionShape& shape, const AttentionGradientInputs& in,
                        AttentionPositions positions, float* dq, float* dk, float* dv);

}  // namespace dtrain::device::cpu
