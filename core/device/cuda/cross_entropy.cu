// The vocabulary-parallel cross-entropy's row statistics (one block per row:
// the maximum, then the sums) and gradient (a grid-stride loop over the
// elements), device/kernel_args.hpp.
#include "device/cuda/block_reduce.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/launch.cuh"
#include "device/cuda/layer_kernels.hpp"

namespace dtrain::device::cuda {

namespace {

__device__ std::int64_t target_at(const LogitSlice& s, std::int64_t r) {
  return s.target_dtype == DType::i32 ? static_cast<const std::int32_t*>(s.targets)[r]
                                      : static_cast<const std::int64_t*>(s.targets)[r];
}

__global__ void statistics_kernel(CrossEntropyStatsArgs a) {
  const LogitSlice& s = a.logits;
  const std::int64_t cols = s.shape.cols;
  for (std::int64_t r = blockIdx.x; r < s.shape.rows; r += gridDim.x) {
    const float* z = s.z + r * cols;
    float max = -CUDART_INF_F;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) max = fmaxf(max, z[j]);
    max = block_max(max);
    float exps = 0.0f, total = 0.0f;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      exps += expf(z[j] - max);
      total += z[j];
    }
    exps = block_sum(exps);
    total = block_sum(total);
    if (threadIdx.x == 0) {
      const std::int64_t column = target_at(s, r) - s.first;
      a.max[r] = max;
      a.sum_exp[r] = exps;
      a.target[r] = column >= 0 && column < cols ? z[column] : 0.0f;
      a.sum[r] = total;
    }
  }
}

__global__ void gradient_kernel(CrossEntropyGradArgs a) {
  const LogitSlice& s = a.logits;
  const std::int64_t cols = s.shape.cols;
  const std::int64_t total = s.shape.rows * cols;
  const float uniform = a.smoothing / static_cast<float>(a.vocab);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const std::int64_t r = e / cols;
    const std::int64_t target = target_at(s, r);
    if (target == a.ignore_index) {
      a.dz[e] = 0.0f;
      continue;
    }
    float g = expf(s.z[e] - a.lse[r]) - uniform;
    if (e % cols == target - s.first) g -= 1.0f - a.smoothing;
    a.dz[e] = a.scale[r] * g;
  }
}

}  // namespace

void cross_entropy_statistics(const CrossEntropyStatsArgs& args, cudaStream_t stream) {
  if (args.logits.shape.rows == 0) return;
  statistics_kernel<<<row_blocks(args.logits.shape.rows), kRowThreads, 0, stream>>>(args);
  check_launch("cross_entropy_statistics");
}

void cross_entropy_gradient(const CrossEntropyGradArgs& args, cudaStream_t stream) {
  const std::int64_t total = args.logits.shape.rows * args.logits.shape.cols;
  if (total == 0) return;
  gradient_kernel<<<element_blocks(total), kRowThreads, 0, stream>>>(args);
  check_launch("cross_entropy_gradient");
}

}  // namespace dtrain::device::cuda
