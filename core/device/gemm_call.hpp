// One checked GEMM as the device backends receive it: the shape with every
// stride resolved (gemm.hpp), the dtypes, and raw pointers to the first
// element of each operand. Plain C++17, so that CUDA sources can include it.
#pragma once

#include "base/dtype.hpp"
#include "device/gemm.hpp"

namespace dtrain::device {

struct GemmCall {
  GemmShape shape;  // strides resolved: no kPacked left
  DType input = DType::f32;   // A and B
  DType output = DType::f32;  // C
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
};

}  // namespace dtrain::device
