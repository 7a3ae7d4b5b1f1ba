// Conversions between f32 and the 16-bit floating formats (IEEE binary16 and
// bfloat16), one element at a time: the reference that every other path
// must give bit for bit. Numbers round to nearest even; infinities and
// subnormals convert exactly; every NaN, whatever its sign and payload,
// becomes the canonical NaN of CUDA's conversion intrinsics (positive, all
// mantissa bits set: f32 0x7fffffff, f16 and bf16 0x7fff), which the CUDA
// kernels use (device/cuda/half.cuh), so that a result does not depend on
// where it was computed. Written without branches so that loops calling them
// vectorise. Whole f16 arrays convert faster through F16C where the CPU has
// it (device/cpu/half_array.hpp).
#pragma once

#include <bit>
#include <cstdint>

namespace dtrain::device::cpu {

inline constexpr std::uint32_t kCanonicalNanF32 = 0x7fffffffu;
inline constexpr std::uint16_t kCanonicalNan16 = 0x7fffu;  // f16 and bf16 alike

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t shifted_exp = 0x7c00u << 13;
  std::uint32_t bits = (static_cast<std::uint32_t>(h) & 0x7fffu) << 13;
  const std::uint32_t exp = bits & shifted_exp;
  bits += (127u - 15u) << 23;
  // Infinity: the exponent must become all ones.
  const std::uint32_t special = bits + ((128u - 16u) << 23);
  // Subnormal: renormalise through one exact float subtraction.
  const float sub = std::bit_cast<float>(bits + (1u << 23)) - std::bit_cast<float>(113u << 23);
  std::uint32_t out = exp == shifted_exp ? special : bits;
  out = exp == 0 ? std::bit_cast<std::uint32_t>(sub) : out;
  out |= (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  const bool is_nan = (h & 0x7fffu) > 0x7c00u;
  return std::bit_cast<float>(is_nan ? kCanonicalNanF32 : out);
}

inline std::uint16_t float_to_half(float value) {
  const std::uint32_t f32_infinity = 255u << 23;
  const std::uint32_t f16_overflow = (127u + 16u) << 23;
  const std::uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  // Subnormal or zero: adding the magic number lets the FPU round the
  // mantissa into the low bits.
  const std::uint32_t subnormal =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(bits) + std::bit_cast<float>(denorm_magic)) -
      denorm_magic;
  // Normal: rebias the exponent and round to nearest even.
  const std::uint32_t odd = (bits >> 13) & 1u;
  const std::uint32_t normal = (bits + (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + odd) >> 13;
  std::uint32_t out = bits < (113u << 23) ? subnormal : normal;
  // Too large for binary16: infinity.
  out = bits >= f16_overflow ? 0x7c00u : out;
  out |= sign >> 16;
  return static_cast<std::uint16_t>(bits > f32_infinity ? kCanonicalNan16 : out);
}

inline float bf16_to_float(std::uint16_t h) {
  const bool is_nan = (h & 0x7fffu) > 0x7f80u;
  return std::bit_cast<float>(is_nan ? kCanonicalNanF32 : static_cast<std::uint32_t>(h) << 16);
}

inline std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<std::uint16_t>(is_nan ? kCanonicalNan16 : rounded);
}

}  // namespace dtrain::device::cpu
