// The floating storage types of the CUDA layer kernels, as tag types that
// load an element into f32 and store an f32 back (bit for bit the CPU's
// conversions, device/cuda/half.cuh), add atomically, and the host-side
// switch from a DType to its tag: the CUDA twin of device/cpu/element.hpp.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>

#include "base/dtype.hpp"
#include "base/error.hpp"
#include "device/cuda/half.cuh"

namespace dtrain::device::cuda {

struct F32 {
  using Bits = float;
  __device__ static float load(Bits v) { return v; }
  __device__ static Bits store(float v) { return v; }
  __device__ static void atomic_add(Bits* to, float v) { atomicAdd(to, v); }
};

struct F16 {
  using Bits = std::uint16_t;
  __device__ static float load(Bits v) { return half_to_float(v); }
  __device__ static Bits store(float v) { return float_to_half(v); }
  __device__ static void atomic_add(Bits* to, float v) { atomicAdd(reinterpret_cast<__half*>(to), __float2half_rn(v)); }
};

struct BF16 {
  using Bits = std::uint16_t;
  __device__ static float load(Bits v) { return bf16_to_float(v); }
  __device__ static Bits store(float v) { return float_to_bf16(v); }
  __device__ static void atomic_add(Bits* to, float v) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(to), __float2bfloat16_rn(v));
  }
};

// Calls body(Tag{}) for f32, f16 or bf16; DT_ERR_UNSUPPORTED naming `what`
// for any other dtype.
template <typename Body>
void with_element(DType dtype, const char* what, Body&& body) {
  switch (dtype) {
    case DType::f32: body(F32{}); return;
    case DType::f16: body(F16{}); return;
    case DType::bf16: body(BF16{}); return;
    default:
      raise(DT_ERR_UNSUPPORTED,
            std::string(what) + ": " + dtype_name(dtype) + " is not supported (f32, f16, bf16)");
  }
}

}  // namespace dtrain::device::cuda
