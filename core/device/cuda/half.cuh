// f32 <-> f16/bf16 conversions for kernels, bit for bit the same as the CPU
// ones in device/cpu/half.hpp (round to nearest even; NaN stays NaN,
// quietened; infinities and subnormals exact), so that a result does not
// depend on where it was computed. The kernel tests compare the two.
#pragma once

#include <cstdint>

namespace dtrain::device::cuda {

__device__ __forceinline__ float bits_to_float(std::uint32_t bits) { return __uint_as_float(bits); }
__device__ __forceinline__ std::uint32_t float_to_bits(float value) { return __float_as_uint(value); }

__device__ __forceinline__ float half_to_float(std::uint16_t h) {
  const std::uint32_t shifted_exp = 0x7c00u << 13;
  std::uint32_t bits = (static_cast<std::uint32_t>(h) & 0x7fffu) << 13;
  const std::uint32_t exp = bits & shifted_exp;
  bits += (127u - 15u) << 23;
  const std::uint32_t special = bits + ((128u - 16u) << 23);
  // __fsub_rn: never contracted or flushed, as on the CPU.
  const float sub = __fsub_rn(bits_to_float(bits + (1u << 23)), bits_to_float(113u << 23));
  std::uint32_t out = exp == shifted_exp ? special : bits;
  out = exp == 0 ? float_to_bits(sub) : out;
  return bits_to_float(out | ((static_cast<std::uint32_t>(h) & 0x8000u) << 16));
}

__device__ __forceinline__ std::uint16_t float_to_half(float value) {
  const std::uint32_t f32_infinity = 255u << 23;
  const std::uint32_t f16_overflow = (127u + 16u) << 23;
  const std::uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  std::uint32_t bits = float_to_bits(value);
  const std::uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  const std::uint32_t special = bits > f32_infinity ? 0x7e00u : 0x7c00u;
  const std::uint32_t subnormal =
      float_to_bits(__fadd_rn(bits_to_float(bits), bits_to_float(denorm_magic))) - denorm_magic;
  const std::uint32_t odd = (bits >> 13) & 1u;
  const std::uint32_t normal = (bits + (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + odd) >> 13;
  std::uint32_t out = bits < (113u << 23) ? subnormal : normal;
  out = bits >= f16_overflow ? special : out;
  return static_cast<std::uint16_t>(out | (sign >> 16));
}

__device__ __forceinline__ float bf16_to_float(std::uint16_t h) {
  return bits_to_float(static_cast<std::uint32_t>(h) << 16);
}

__device__ __forceinline__ std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = float_to_bits(value);
  const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (bits >> 16) | 0x40u;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<std::uint16_t>(is_nan ? quiet_nan : rounded);
}

}  // namespace dtrain::device::cuda
