// The passes of blockwise attention that are not products
// (device/cuda/attention_kernels.hpp). The softmax gives each row one block
// and reduces in double across it; the element-wise passes are grid-stride
// loops; merge and the output dot give each row one thread.
#include <math_constants.h>

#include "device/cuda/attention_kernels.hpp"
#include "device/cuda/block_reduce.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/launch.cuh"

namespace dtrain::device::cuda {

namespace {

__device__ bool visible(const ScoreMask& m, std::int64_t r, std::int64_t c) {
  return !m.causal || m.k_positions[c] <= m.q_positions[r];
}

__global__ void masked_softmax_kernel(ScoreMask m, float* scores, float* lse, std::int64_t stride) {
  for (std::int64_t r = blockIdx.x; r < m.rows; r += gridDim.x) {
    float* row = scores + r * m.cols;
    double top = -CUDART_INF;
    for (std::int64_t c = threadIdx.x; c < m.cols; c += blockDim.x) {
      if (visible(m, r, c)) top = fmax(top, static_cast<double>(row[c]));
    }
    top = block_max(top);
    if (top == -CUDART_INF) {
      for (std::int64_t c = threadIdx.x; c < m.cols; c += blockDim.x) row[c] = 0.0f;
      if (threadIdx.x == 0) lse[r * stride] = -CUDART_INF_F;
      continue;
    }
    double sum = 0.0;
    for (std::int64_t c = threadIdx.x; c < m.cols; c += blockDim.x) {
      if (visible(m, r, c)) sum += exp(static_cast<double>(row[c]) - top);
    }
    sum = block_sum(sum);
    const double row_lse = top + log(sum);
    // Each thread writes only the elements it read.
    for (std::int64_t c = threadIdx.x; c < m.cols; c += blockDim.x) {
      row[c] = visible(m, r, c) ? static_cast<float>(exp(static_cast<double>(row[c]) - row_lse)) : 0.0f;
    }
    if (threadIdx.x == 0) lse[r * stride] = static_cast<float>(row_lse);
  }
}

__global__ void masked_probabilities_kernel(ScoreMask m, float* scores, const float* lse, std::int64_t stride) {
  const std::int64_t total = m.rows * m.cols;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const std::int64_t r = e / m.cols;
    const std::int64_t c = e % m.cols;
    const float row_lse = lse[r * stride];
    scores[e] = visible(m, r, c) && row_lse != -CUDART_INF_F ? expf(scores[e] - row_lse) : 0.0f;
  }
}

__global__ void score_gradient_kernel(std::int64_t rows, std::int64_t cols, const float* p, const float* delta,
                                      std::int64_t stride, float scale, float* ds) {
  const std::int64_t total = rows * cols;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    ds[e] = p[e] * (ds[e] - delta[(e / cols) * stride]) * scale;
  }
}

__global__ void merge_kernel(std::int64_t rows, std::int64_t head_dim, float* o, float* lse, const float* o_other,
                             const float* lse_other) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += step) {
    const double a = lse[r];
    const double b = lse_other[r];
    float* o_row = o + r * head_dim;
    const float* other_row = o_other + r * head_dim;
    if (a == -CUDART_INF && b == -CUDART_INF) {
      for (std::int64_t c = 0; c < head_dim; ++c) o_row[c] = 0.0f;
      continue;
    }
    const double top = fmax(a, b);
    const double merged = top + log(exp(a - top) + exp(b - top));
    const double wa = exp(a - merged);
    const double wb = exp(b - merged);
    for (std::int64_t c = 0; c < head_dim; ++c) o_row[c] = static_cast<float>(wa * o_row[c] + wb * other_row[c]);
    lse[r] = static_cast<float>(merged);
  }
}

__global__ void output_dot_kernel(std::int64_t rows, std::int64_t head_dim, const float* d_o, const float* o,
                                  float* delta) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += step) {
    double sum = 0.0;
    for (std::int64_t c = 0; c < head_dim; ++c) sum += static_cast<double>(d_o[r * head_dim + c]) * o[r * head_dim + c];
    delta[r] = static_cast<float>(sum);
  }
}

}  // namespace

void masked_softmax(const ScoreMask& mask, float* scores, float* lse, std::int64_t stride, cudaStream_t stream) {
  if (mask.rows == 0) return;
  masked_softmax_kernel<<<row_blocks(mask.rows), kRowThreads, 0, stream>>>(mask, scores, lse, stride);
  check_launch("masked_softmax_kernel");
}

void masked_probabilities(const ScoreMask& mask, float* scores, const float* lse, std::int64_t stride,
                          cudaStream_t stream) {
  if (mask.rows == 0 || mask.cols == 0) return;
  masked_probabilities_kernel<<<element_blocks(mask.rows * mask.cols), kRowThreads, 0, stream>>>(mask, scores, lse,
                                                                                                  stride);
  check_launch("masked_probabilities_kernel");
}

void score_gradient(std::int64_t rows, std::int64_t cols, const float* p, const float* delta, std::int64_t stride,
                    float scale, float* ds, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  score_gradient_kernel<<<element_blocks(rows * cols), kRowThreads, 0, stream>>>(rows, cols, p, delta, stride, scale,
                                                                                 ds);
  check_launch("score_gradient_kernel");
}

void merge_partial_results(std::int64_t rows, std::int64_t head_dim, float* o, float* lse, const float* o_other,
                           const float* lse_other, cudaStream_t stream) {
  if (rows == 0) return;
  merge_kernel<<<element_blocks(rows), kRowThreads, 0, stream>>>(rows, head_dim, o, lse, o_other, lse_other);
  check_launch("merge_kernel");
}

void output_dot(std::int64_t rows, std::int64_t head_dim, const float* d_o, const float* o, float* delta,
                cudaStream_t stream) {
  if (rows == 0) return;
  output_dot_kernel<<<element_blocks(rows), kRowThreads, 0, stream>>>(rows, head_dim, d_o, o, delta);
  check_launch("output_dot_kernel");
}

}  // namespace dtrain::device::cuda
