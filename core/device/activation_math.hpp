// The activations and their derivatives, element by element, in f32: one
// definition for the CPU and the CUDA kernels (device/kernel_args.hpp names
// the formulas). CUDA sources (nvcc, C++17) compute tanh and the logistic
// function with CUDA's float functions; the CPU with the branch-free forms
// of device/cpu/exp.hpp, which loops vectorize where tanhf and expf are a
// call per element.
#pragma once

#include <math.h>

#include "device/host_device.hpp"
#include "device/kernel_args.hpp"
#ifndef __CUDACC__
#include "device/cpu/exp.hpp"
#endif

namespace dtrain::device {

DTRAIN_HOST_DEVICE inline float tanh_f32(float u) {
#ifdef __CUDACC__
  return tanhf(u);
#else
  return cpu::tanh_branch_free(u);
#endif
}

// 1 / (1 + e^{-x}).
DTRAIN_HOST_DEVICE inline float logistic_f32(float x) {
#ifdef __CUDACC__
  return 1.0f / (1.0f + expf(-x));
#else
  return cpu::logistic_branch_free(x);
#endif
}

namespace activation_constants {
inline constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2 / pi)
inline constexpr float kGeluCubic = 0.044715f;
inline constexpr float kInvSqrt2 = 0.7071067811865476f;    // 1 / sqrt(2)
inline constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi), the normal density at 0
}  // namespace activation_constants

DTRAIN_HOST_DEVICE inline float activate(Activation kind, float x) {
  using namespace activation_constants;
  switch (kind) {
    case Activation::gelu_tanh: return 0.5f * x * (1.0f + tanh_f32(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
    case Activation::gelu_erf: return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
    case Activation::silu: return x * logistic_f32(x);
  }
  return x;
}

// d activate(kind, x) / dx.
DTRAIN_HOST_DEVICE inline float activation_slope(Activation kind, float x) {
  using namespace activation_constants;
  switch (kind) {
    case Activation::gelu_tanh: {
      const float t = tanh_f32(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
      return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
    }
    case Activation::gelu_erf:  // Phi(x) + x phi(x)
      return 0.5f * (1.0f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x);
    case Activation::silu: {
      const float s = logistic_f32(x);
      return s * (1.0f + x * (1.0f - s));
    }
  }
  return 1.0f;
}

}  // namespace dtrain::device
