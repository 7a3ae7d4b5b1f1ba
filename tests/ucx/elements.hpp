// Test data for every dtype: a deterministic value for (rank, index) that
// each rank can compute for any other, and the exact or tolerant reference
// of a reduction over ranks.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.hpp"
#include "device/cpu/half.hpp"
#include "dtrain/comm.h"

namespace dtrain::test {

template <DType D>
struct Element;

template <>
struct Element<DType::f32> {
  using type = float;
  static double get(type v) { return v; }
  static type make(double v) { return static_cast<float>(v); }
  static constexpr double tolerance = 1e-6;
};
template <>
struct Element<DType::f64> {
  using type = double;
  static double get(type v) { return v; }
  static type make(double v) { return v; }
  static constexpr double tolerance = 1e-14;
};
// Reductions of the test values are exact in every format except products
// (n - 1 roundings) and averages (one division); a few units in the last
// place cover both.
template <>
struct Element<DType::f16> {
  using type = std::uint16_t;
  static double get(type v) { return device::cpu::half_to_float(v); }
  static type make(double v) { return device::cpu::float_to_half(static_cast<float>(v)); }
  static constexpr double tolerance = 1.0 / 512;  // 2 ulp of binary16
};
template <>
struct Element<DType::bf16> {
  using type = std::uint16_t;
  static double get(type v) { return device::cpu::bf16_to_float(v); }
  static type make(double v) { return device::cpu::float_to_bf16(static_cast<float>(v)); }
  static constexpr double tolerance = 1.0 / 64;  // 2 ulp of bfloat16
};
template <typename T>
struct IntegerElement {
  using type = T;
  static double get(type v) { return static_cast<double>(v); }
  static type make(double v) { return static_cast<T>(static_cast<std::int64_t>(v)); }
  static constexpr double tolerance = 0;
};
template <>
struct Element<DType::i32> : IntegerElement<std::int32_t> {};
template <>
struct Element<DType::i64> : IntegerElement<std::int64_t> {};
template <>
struct Element<DType::i8> : IntegerElement<std::int8_t> {};
template <>
struct Element<DType::u8> : IntegerElement<std::uint8_t> {};

// Calls f.template operator()<D>() for the runtime dtype.
template <typename F>
void with_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32: return f.template operator()<DType::f32>();
    case DType::f64: return f.template operator()<DType::f64>();
    case DType::f16: return f.template operator()<DType::f16>();
    case DType::bf16: return f.template operator()<DType::bf16>();
    case DType::i32: return f.template operator()<DType::i32>();
    case DType::i64: return f.template operator()<DType::i64>();
    case DType::i8: return f.template operator()<DType::i8>();
    case DType::u8: return f.template operator()<DType::u8>();
  }
}

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all{DType::f32, DType::f64, DType::f16, DType::bf16,
                                      DType::i32, DType::i64, DType::i8,  DType::u8};
  return all;
}

// Rank r's element i: quarter steps in [-2, 2] for floats (exact in every
// format, sums too), values across the whole range for integers (so sums
// and products wrap).
template <DType D>
typename Element<D>::type value(int rank, std::int64_t i, int salt = 0) {
  if constexpr (Element<D>::tolerance > 0) {
    return Element<D>::make(static_cast<double>((i * 7 + rank * 13 + salt) % 17 - 8) * 0.25);
  } else {
    using T = typename Element<D>::type;
    const auto wide = static_cast<std::uint64_t>((i * 2654435761ll + rank * 40503ll + salt) % 1000003);
    return static_cast<T>(wide);
  }
}

// The reduction of value(r, i) over ranks 0..n-1.
template <DType D>
double reference(dt_reduce_op op, int n, std::int64_t i, int salt = 0) {
  using E = Element<D>;
  using T = typename E::type;
  if constexpr (E::tolerance > 0) {
    double acc = E::get(value<D>(0, i, salt));
    for (int r = 1; r < n; ++r) {
      const double v = E::get(value<D>(r, i, salt));
      switch (op) {
        case DT_SUM:
        case DT_AVG: acc += v; break;
        case DT_PROD: acc *= v; break;
        case DT_MAX: acc = std::max(acc, v); break;
        case DT_MIN: acc = std::min(acc, v); break;
      }
    }
    return op == DT_AVG ? acc / n : acc;
  } else {
    // Wrapping arithmetic: modulo 2^64, then cut to the type's width.
    std::uint64_t acc = static_cast<std::uint64_t>(static_cast<std::int64_t>(value<D>(0, i, salt)));
    T best = value<D>(0, i, salt);
    for (int r = 1; r < n; ++r) {
      const T v = value<D>(r, i, salt);
      const auto wide = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
      if (op == DT_SUM) acc += wide;
      if (op == DT_PROD) acc *= wide;
      if (op == DT_MAX) best = std::max(best, v);
      if (op == DT_MIN) best = std::min(best, v);
    }
    if (op == DT_MAX || op == DT_MIN) return static_cast<double>(best);
    return static_cast<double>(static_cast<T>(acc));
  }
}

// Whether `got` is the reduction `want` (exactly for integers).
template <DType D>
bool close_enough(typename Element<D>::type got, double want) {
  const double g = Element<D>::get(got);
  if (Element<D>::tolerance == 0) return g == want;
  return std::abs(g - want) <= Element<D>::tolerance * std::abs(want) + 1e-30;
}

inline const char* op_name(dt_reduce_op op) {
  switch (op) {
    case DT_SUM: return "sum";
    case DT_AVG: return "avg";
    case DT_MAX: return "max";
    case DT_MIN: return "min";
    case DT_PROD: return "prod";
  }
  return "?";
}

inline std::vector<dt_reduce_op> ops_for(DType dtype) {
  if (dtype_is_floating(dtype)) return {DT_SUM, DT_AVG, DT_MAX, DT_MIN, DT_PROD};
  return {DT_SUM, DT_MAX, DT_MIN, DT_PROD};
}

}  // namespace dtrain::test
