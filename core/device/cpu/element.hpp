// The floating storage types the CPU kernels take, as tag types that load an
// element into f32 and store an f32 back (16-bit ones rounding to nearest
// even, device/cpu/half.hpp), and the switch from a DType to its tag. Kernels
// are templates over the tag: one body for f32, f16 and bf16, math in f32.
#pragma once

#include <cstdint>
#include <string>

#include "base/dtype.hpp"
#include "base/error.hpp"
#include "device/cpu/half.hpp"

namespace dtrain::device::cpu {

struct F32 {
  using Bits = float;
  static float load(Bits v) { return v; }
  static Bits store(float v) { return v; }
};

struct F16 {
  using Bits = std::uint16_t;
  static float load(Bits v) { return half_to_float(v); }
  static Bits store(float v) { return float_to_half(v); }
};

struct BF16 {
  using Bits = std::uint16_t;
  static float load(Bits v) { return bf16_to_float(v); }
  static Bits store(float v) { return float_to_bf16(v); }
};

// Calls body(Tag{}) for f32, f16 or bf16; DT_ERR_UNSUPPORTED naming `what`
// for any other dtype.
template <typename Body>
decltype(auto) with_element(DType dtype, const char* what, Body&& body) {
  switch (dtype) {
    case DType::f32: return body(F32{});
    case DType::f16: return body(F16{});
    case DType::bf16: return body(BF16{});
    default:
      raise(DT_ERR_UNSUPPORTED,
            std::string(what) + ": " + dtype_name(dtype) + " is not supported (f32, f16, bf16)");
  }
}

}  // namespace dtrain::device::cpu
