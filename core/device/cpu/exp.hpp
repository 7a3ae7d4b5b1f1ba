// e^x for x <= 0 in float, and tanh and the logistic function built on it,
// written so that a loop over an array of them vectorizes (no call; their
// comparisons become selects where the file is compiled with
// -fno-trapping-math, which GCC needs to turn a floating-point comparison
// into a mask): the softmax of attention rows, whose arguments are a score
// minus the row's largest, and the activations (GELU, SiLU).
//
// Range reduction x = n ln 2 + r with |r| <= ln 2 / 2 (ln 2 in two parts,
// so that n ln 2 is exact), Cephes' minimax polynomial for e^r, and 2^n
// put into the exponent bits. Within 2 ulp of e^x down to -87 (the smallest
// normal float is e^-87.3); below that, and for -inf, exactly 0. A positive
// x from rounding (a score a hair above its row's log-sum-exp) still gets
// e^x: the reduction holds up to x = 88. NaN gives NaN.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace dtrain::device::cpu {

inline float exp_of_nonpositive(float x) {
  constexpr float kLowest = -87.0F;
  constexpr float kLog2E = 1.44269504088896341F;
  constexpr float kLn2High = 0.693359375F;  // few bits: n times it is exact
  constexpr float kLn2Low = -2.12194440e-4F;
  // Adding 1.5 * 2^23 rounds to an integer, which the low bits then hold.
  constexpr float kRound = 12582912.0F;
  const float clamped = std::max(x, kLowest);  // -inf too; NaN stays NaN
  const float shifted = clamped * kLog2E + kRound;
  const float n = shifted - kRound;
  float r = clamped - n * kLn2High;
  r = r - n * kLn2Low;
  float p = 1.9875691500e-4F;
  p = p * r + 1.3981999507e-3F;
  p = p * r + 8.3334519073e-3F;
  p = p * r + 4.1665795894e-2F;
  p = p * r + 1.6666665459e-1F;
  p = p * r + 5.0000001201e-1F;
  p = p * r * r + r + 1.0F;
  const std::int32_t power = std::bit_cast<std::int32_t>(shifted) - std::bit_cast<std::int32_t>(kRound);
  const float value = p * std::bit_cast<float>((power + 127) << 23);
  return x < kLowest ? 0.0F : value;
}

// tanh u = sign(u) (1 - e^{-2|u|}) / (1 + e^{-2|u|}): the exponent is never
// positive. Near 0 the difference loses relative precision (tanh 1e-4 comes
// within 1e-7 absolute, not relative), which GELU's 1 + tanh does not see.
// +-1 from |u| = 9 on, as tanhf gives; NaN gives NaN.
inline float tanh_branch_free(float u) {
  const float e = exp_of_nonpositive(-2.0F * std::fabs(u));
  const float magnitude = (1.0F - e) / (1.0F + e);
  return std::copysign(magnitude, u);
}

// 1 / (1 + e^{-x}), from e^{-|x|} so that the exponent is never positive:
// for x < 0 it is e^x / (1 + e^x). 0 and 1 at the ends; NaN gives NaN.
inline float logistic_branch_free(float x) {
  const float e = exp_of_nonpositive(-std::fabs(x));
  const float positive = 1.0F / (1.0F + e);
  return x < 0.0F ? e * positive : positive;
}

}  // namespace dtrain::device::cpu
