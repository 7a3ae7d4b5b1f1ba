// Reductions across one block of kRowThreads threads: every warp reduces
// with shuffles, the warps' results meet in shared memory, and every thread
// gets the total. Each call ends with a barrier, so calls may follow one
// another and the block's threads may reuse what they read before. Float
// for the layer kernels; double where a row's sum must not lose what float
// would (blockwise attention's softmax statistics).
#pragma once

#include <math_constants.h>

#include "device/cuda/launch.cuh"

namespace dtrain::device::cuda {

template <typename T>
struct SumOp {
  __device__ T operator()(T a, T b) const { return a + b; }
  __device__ static T identity() { return T(0); }
};

template <typename T>
struct MaxOp {
  // fmax ignores a NaN operand, as std::max on the CPU does when the
  // running maximum comes first.
  __device__ T operator()(T a, T b) const { return fmax(a, b); }
  __device__ static T identity() { return -T(CUDART_INF); }
};

template <typename T, typename Op>
__device__ T block_reduce(T value, Op op) {
  __shared__ T partials[kRowThreads / 32];
  __shared__ T total;
  for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) partials[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < kRowThreads / 32 ? partials[lane] : Op::identity();
    for (int offset = 16; offset > 0; offset /= 2) value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
    if (lane == 0) total = value;
  }
  __syncthreads();
  const T result = total;
  __syncthreads();  // `total` and `partials` may be written by the next call
  return result;
}

template <typename T>
__device__ T block_sum(T value) {
  return block_reduce(value, SumOp<T>{});
}
template <typename T>
__device__ T block_max(T value) {
  return block_reduce(value, MaxOp<T>{});
}

}  // namespace dtrain::device::cuda
