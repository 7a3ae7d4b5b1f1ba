// Softmax along rows and its backward pass (device/kernel_args.hpp), one
// block per row: the maximum, then the sum of exponentials, then the
// outputs, each a strided pass of the block's threads over the row.
#include "device/cuda/block_reduce.cuh"
#include "device/cuda/element.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/layer_kernels.hpp"

namespace dtrain::device::cuda {

namespace {

template <typename E>
__global__ void softmax_kernel(SoftmaxArgs a) {
  using Bits = typename E::Bits;
  const std::int64_t cols = a.shape.cols;
  for (std::int64_t r = blockIdx.x; r < a.shape.rows; r += gridDim.x) {
    const Bits* x = static_cast<const Bits*>(a.x) + r * cols;
    Bits* y = static_cast<Bits*>(a.y) + r * cols;
    float max = -CUDART_INF_F;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) max = fmaxf(max, E::load(x[j]));
    max = block_max(max);
    float sum = 0.0f;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(E::load(x[j]) - max);
    sum = block_sum(sum);
    const float inverse = 1.0f / sum;
    // In place is safe: each thread writes only the elements it reads.
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) y[j] = E::store(expf(E::load(x[j]) - max) * inverse);
    if (threadIdx.x == 0) a.lse[r] = max + logf(sum);
  }
}

template <typename E>
__global__ void softmax_backward_kernel(SoftmaxBackwardArgs a) {
  using Bits = typename E::Bits;
  const std::int64_t cols = a.shape.cols;
  for (std::int64_t r = blockIdx.x; r < a.shape.rows; r += gridDim.x) {
    const Bits* y = static_cast<const Bits*>(a.y) + r * cols;
    const Bits* dy = static_cast<const Bits*>(a.dy) + r * cols;
    Bits* dx = static_cast<Bits*>(a.dx) + r * cols;
    float dot = 0.0f;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) dot += E::load(dy[j]) * E::load(y[j]);
    dot = block_sum(dot);
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) dx[j] = E::store(E::load(y[j]) * (E::load(dy[j]) - dot));
  }
}

}  // namespace

void softmax(const SoftmaxArgs& args, cudaStream_t stream) {
  if (args.shape.rows == 0) return;
  with_element(args.dtype, "softmax", [&](auto e) {
    softmax_kernel<decltype(e)><<<row_blocks(args.shape.rows), kRowThreads, 0, stream>>>(args);
  });
  check_launch("softmax_kernel");
}

void softmax_backward(const SoftmaxBackwardArgs& args, cudaStream_t stream) {
  if (args.shape.rows == 0 || args.shape.cols == 0) return;
  with_element(args.dtype, "softmax_backward", [&](auto e) {
    softmax_backward_kernel<decltype(e)><<<row_blocks(args.shape.rows), kRowThreads, 0, stream>>>(args);
  });
  check_launch("softmax_backward_kernel");
}

}  // namespace dtrain::device::cuda
