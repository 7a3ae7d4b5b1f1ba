// The vocabulary-parallel cross-entropy's row statistics (one block per row:
// the maximum, then the sums) and gradient (a grid-stride loop over the
// elements), device/kernel_args.hpp.
#include "device/cuda/block_reduce.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/launch.cuh"
#include "device/cuda/layer_kernels.hpp"

namespace dtrain::device::cuda {

namespace {

__device__ std::int64_t target_at(DType dtype, const void* targets, std::int64_t r) {
  return dtype == DType::i32 ? static_cast<const std::int32_t*>(targets)[r]
                             : static_cast<const std::int64_t*>(targets)[r];
}

__global__ void statistics_kernel(CrossEntropyStatsArgs a) {
  const std::int64_t cols = a.shape.cols;
  for (std::int64_t r = blockIdx.x; r < a.shape.rows; r += gridDim.x) {
    const float* z = a.z + r * cols;
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
      const std::int64_t column = target_at(a.target_dtype, a.targets, r) - a.first;
      a.max[r] = max;
      a.sum_exp[r] = exps;
      a.target[r] = column >= 0 && column < cols ? z[column] : 0.0f;
      a.sum[r] = total;
    }
  }
}

__global__ void gradient_kernel(CrossEntropyGradArgs a) {
  const std::int64_t cols = a.shape.cols;
  const std::int64_t total = a.shape.rows * cols;
  const float uniform = a.smoothing / static_cast<float>(a.vocab);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const std::int64_t r = e / cols;
    const std::int64_t target = target_at(a.target_dtype, a.targets, r);
    if (target == a.ignore_index) {
      a.dz[e] = 0.0f;
      continue;
    }
    float g = expf(a.z[e] - a.lse[r]) - uniform;
    if (e % cols == target - a.first) g -= 1.0f - a.smoothing;
    a.dz[e] = a.scale[r] * g;
  }
}

}  // namespace

void cross_entropy_statistics(const CrossEntropyStatsArgs& args, cudaStream_t stream) {
  if (args.shape.rows == 0) return;
  statistics_kernel<<<row_blocks(args.shape.rows), kRowThreads, 0, stream>>>(args);
  check_launch("cross_entropy_statistics");
}

void cross_entropy_gradient(const CrossEntropyGradArgs& args, cudaStream_t stream) {
  const std::int64_t total = args.shape.rows * args.shape.cols;
  if (total == 0) return;
  gradient_kernel<<<element_blocks(total), kRowThreads, 0, stream>>>(args);
  check_launch("cross_entropy_gradient");
}

}  // namespace dtrain::device::cuda
