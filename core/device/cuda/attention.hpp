// Blockwise attention on a CUDA device (what each computes:
// device/attention.hpp), queued on the Queue's stream. Per query head, the
// scores of the whole block are one cuBLAS product into a scratch block
// (q_rows x kv_rows floats, two of them backward), the softmax, the mask and
// the score gradient are kernels (device/cuda/attention_kernels.hpp), and
// the outputs and gradients are products again. Positions are in device
// memory. Unlike the CPU, a causal block is computed whole and masked.
#pragma once

#include "device/attention.hpp"

namespace dtrain::device::cuda {

void attention_forward(Queue& queue, const AttentionShape& shape, const float* q, const float* k, const float* v,
                       AttentionPositions positions, float* o, float* lse);
void attention_merge(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o,
                     float* lse, const float* o_other, const float* lse_other);
void attention_output_dot(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim,
                          const float* d_o, const float* o, float* delta);
void attention_backward(Queue& queue, const AttentionShape& shape, const AttentionGradientInputs& in,
                        AttentionPositions positions, float* dq, float* dk, float* dv);

}  // namespace dtrain::device::cuda
