// Reductions across one block of kRowThreads threads: every warp reduces
// with shuffles, the warps' results meet in shared memory, and every thread
// gets the total. Each call ends with a barrier, so calls may follow one
// another and the block's threads may reuse what they read before.
#pragma once

#include <math_constants.h>

#include "device/cuda/launch.cuh"

namespace dtrain::device::cuda {

struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
  __device__ static float identity() { return 0.0f; }
};

struct MaxOp {
  // fmaxf ignores a NaN operand, as std::max on the CPU does when the
  // running maximum comes first.
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ static float identity() { return -CUDART_INF_F; }
};

template <typename Op>
__device__ float block_reduce(float value, Op op) {
  __shared__ float partials[kRowThreads / 32];
  __shared__ float total;
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
  const float result = total;
  __syncthreads();  // `total` and `partials` may be written by the next call
  return result;
}

__device__ inline float block_sum(float value) { return block_reduce(value, SumOp{}); }
__device__ inline float block_max(float value) { return block_reduce(value, MaxOp{}); }

}  // namespace dtrain::device::cuda
