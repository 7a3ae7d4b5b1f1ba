// How the CPU kernels read and write each parameter dtype: every value is
// widened to f32 on load and rounded (to nearest even) on store, with the
// branch-free conversions of device/cpu/half.hpp so that loops vectorise.
#pragma once

#include <cstdint>

#include "base/dtype.hpp"
#include "base/error.hpp"
#include "device/cpu/half.hpp"

namespace dtrain::optim::cpu {

struct F32 {
  using type = float;
  static float load(float x) { return x; }
  static float store(float x) { return x; }
};

struct F16 {
  using type = std::uint16_t;
  static float load(std::uint16_t x) { return device::cpu::half_to_float(x); }
  static std::uint16_t store(float x) { return device::cpu::float_to_half(x); }
};

struct BF16 {
  using type = std::uint16_t;
  static float load(std::uint16_t x) { return device::cpu::bf16_to_float(x); }
  static std::uint16_t store(float x) { return device::cpu::float_to_bf16(x); }
};

// Calls fn(Element{}) with the policy of `dtype`.
template <typename Fn>
decltype(auto) with_element(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::f32: return fn(F32{});
    case DType::f16: return fn(F16{});
    case DType::bf16: return fn(BF16{});
    default: break;
  }
  raise(DT_ERR_INTERNAL, std::string("optimizer kernel called on ") + dtype_name(dtype));
}

}  // namespace dtrain::optim::cpu
