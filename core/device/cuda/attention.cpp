#include "device/cuda/attention.hpp"

#include <cuda_runtime_api.h>

#include "device/buffer.hpp"
#include "device/cuda/attention_kernels.hpp"
#include "device/cuda/runtime.hpp"
#include "device/attention_heads.hpp"

namespace dtrain::device::cuda {

namespace {

// Products on the Queue's stream (cuBLAS).
void product(Queue& queue, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k,
             double alpha, Matrix a, Matrix b, double beta, Matrix c) {
  device::product(queue.view(nullptr, 0, DType::f32), transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
}

ScoreMask mask_of(const AttentionShape& shape, AttentionPositions positions) {
  return {shape.q_rows, shape.kv_rows, shape.causal, positions.q, positions.k};
}

cudaStream_t stream_of(const Queue& queue) { return static_cast<cudaStream_t>(queue.stream()); }

}  // namespace

void attention_forward(Queue& queue, const AttentionShape& shape, const float* q, const float* k, const float* v,
                       AttentionPositions positions, float* o, float* lse) {
  const DeviceGuard guard(queue.device_id());
  const Heads heads{shape};
  // Every entry is written (a product with beta 0, then the softmax).
  const Buffer scores(queue, static_cast<std::size_t>(shape.q_rows * shape.kv_rows) * sizeof(float),
                      Buffer::Contents::unset);
  auto* p = static_cast<float*>(scores.data());
  for (std::int64_t h = 0; h < shape.q_heads; ++h) {
    product(queue, false, true, shape.q_rows, shape.kv_rows, shape.head_dim, shape.scale, heads.q(q, h),
            heads.kv(k, h), 0.0, {p, shape.kv_rows});
    masked_softmax(mask_of(shape, positions), p, lse + h, shape.q_heads, stream_of(queue));
    product(queue, false, false, shape.q_rows, shape.head_dim, shape.kv_rows, 1.0, {p, shape.kv_rows},
            heads.kv(v, h), 0.0, heads.q(o, h));
  }
}

void attention_merge(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o,
                     float* lse, const float* o_other, const float* lse_other) {
  const DeviceGuard guard(queue.device_id());
  merge_partial_results(rows * heads, head_dim, o, lse, o_other, lse_other, stream_of(queue));
}

void attention_output_dot(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim,
                          const float* d_o, const float* o, float* delta) {
  const DeviceGuard guard(queue.device_id());
  output_dot(rows * heads, head_dim, d_o, o, delta, stream_of(queue));
}

void attention_backward(Queue& queue, const AttentionShape& shape, const AttentionGradientInputs& in,
                        AttentionPositions positions, float* dq, float* dk, float* dv) {
  const DeviceGuard guard(queue.device_id());
  const Heads heads{shape};
  const std::size_t block = static_cast<std::size_t>(shape.q_rows * shape.kv_rows) * sizeof(float);
  // Every entry of both is written by a product with beta 0 first.
  const Buffer probabilities(queue, block, Buffer::Contents::unset);
  const Buffer score_gradients(queue, block, Buffer::Contents::unset);
  auto* p = static_cast<float*>(probabilities.data());
  auto* ds = static_cast<float*>(score_gradients.data());
  const Matrix p_block{p, shape.kv_rows};
  const Matrix ds_block{ds, shape.kv_rows};
  for (std::int64_t h = 0; h < shape.q_heads; ++h) {
    product(queue, false, true, shape.q_rows, shape.kv_rows, shape.head_dim, shape.scale, heads.q(in.q, h),
            heads.kv(in.k, h), 0.0, p_block);
    masked_probabilities(mask_of(shape, positions), p, in.lse + h, shape.q_heads, stream_of(queue));
    // ds = p (d_o_h v_g^T - delta) scale.
    product(queue, false, true, shape.q_rows, shape.kv_rows, shape.head_dim, 1.0, heads.q(in.d_o, h),
            heads.kv(in.v, h), 0.0, ds_block);
    score_gradient(shape.q_rows, shape.kv_rows, p, in.delta + h, shape.q_heads, static_cast<float>(shape.scale), ds,
                   stream_of(queue));
    // dq_h += ds k_g; dk_g += ds^T q_h; dv_g += p^T d_o_h.
    product(queue, false, false, shape.q_rows, shape.head_dim, shape.kv_rows, 1.0, ds_block, heads.kv(in.k, h), 1.0,
            heads.q(dq, h));
    product(queue, true, false, shape.kv_rows, shape.head_dim, shape.q_rows, 1.0, ds_block, heads.q(in.q, h), 1.0,
            heads.kv(dk, h));
    product(queue, true, false, shape.kv_rows, shape.head_dim, shape.q_rows, 1.0, p_block, heads.q(in.d_o, h), 1.0,
            heads.kv(dv, h));
  }
}

}  // namespace dtrain::device::cuda
