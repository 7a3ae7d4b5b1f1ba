// f32 <-> f16/bf16 conversions for kernels: CUDA's intrinsics, whose results
// the CPU's conversions (device/cpu/half.hpp) give bit for bit, so that a
// result does not depend on where it was computed. Numbers round to nearest
// even; infinities and subnormals convert exactly; every NaN becomes the
// canonical NaN (positive, all mantissa bits set: f32 0x7fffffff, f16 and
// bf16 0x7fff): CUDA's canonical NaN, which __half2float, __float2half_rn and
// __float2bfloat16_rn return for every NaN (their host versions in
// cuda_fp16.hpp and cuda_bf16.hpp write out the same rule).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace dtrain::device::cuda {

__device__ __forceinline__ float half_to_float(std::uint16_t h) { return __half2float(__ushort_as_half(h)); }

__device__ __forceinline__ std::uint16_t float_to_half(float value) {
  return __half_as_ushort(__float2half_rn(value));
}

// __bfloat162float is cvt.f32.bf16 from sm_90 and a move of the bits before
// (and on the host), which keeps a NaN's payload; the select gives every
// architecture the canonical NaN.
__device__ __forceinline__ float bf16_to_float(std::uint16_t h) {
  const float value = __bfloat162float(__ushort_as_bfloat16(h));
  return isnan(value) ? __uint_as_float(0x7fffffffu) : value;
}

__device__ __forceinline__ std::uint16_t float_to_bf16(float value) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(value));
}

}  // namespace dtrain::device::cuda
