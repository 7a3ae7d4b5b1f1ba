// The element-wise loops of reduce(), written once and compiled once per
// instruction set: reduce_generic.cpp with the build's flags, and on x86-64
// reduce_avx2.cpp with AVX2, which reduce.cpp picks when the CPU has it.
// They are plain loops that GCC vectorises at -O3 (see CMakeLists.txt).
// Every variant computes each element alone, in the same order of
// operations, so all give the same bits. Integer sums and products wrap
// (device/wide.hpp).
//
// Everything but the entry points is in an anonymous namespace, so that the
// copies compiled with different flags stay apart.
#pragma once

#include <cstdint>
#include <type_traits>

#include "base/dtype.hpp"
#include "device/cpu/half.hpp"
#include "device/cpu/reduce.hpp"
#include "device/wide.hpp"

// reduce_avx2.cpp asks for AVX2 here, after the includes and not for its
// whole file: an inline function of those headers that GCC emits out of
// line (the f16/bf16 conversions, std::bit_cast) is one symbol that every
// object shares, and the linker keeps whichever copy it meets first.
// Compiled without AVX2, every copy runs on any x86-64 CPU; the loops below
// may still inline them.
#ifdef DTRAIN_REDUCE_LOOPS_WITH_AVX2
#pragma GCC target("avx2")
#endif

namespace dtrain::device::cpu {

// dst[i] = a[i] op b[i]; dst is a or b, or overlaps neither.
void combine_generic(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count);
#if defined(__x86_64__)
#define DTRAIN_REDUCE_AVX2 1  // reduce_avx2.cpp is built (CMakeLists.txt); call it only where the CPU has AVX2
void combine_avx2(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count);
#endif

namespace {

template <typename T>
struct Sum {
  static T apply(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)); }
};
template <typename T>
struct Prod {
  static T apply(T a, T b) {
    // u8/i8/i16 multiply would promote to int and could overflow it; unsigned
    // int arithmetic is wide enough for every operand width used here.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Wide<T>>;
    return static_cast<T>(static_cast<U>(static_cast<Wide<T>>(a)) * static_cast<U>(static_cast<Wide<T>>(b)));
  }
};
template <typename T>
struct Max {
  static T apply(T a, T b) { return b > a ? b : a; }
};
template <typename T>
struct Min {
  static T apply(T a, T b) { return b < a ? b : a; }
};

// `dst` may be `a` or `b` (each element is read before it is written),
// which restrict cannot say; ivdep tells GCC that no iteration depends on
// another, so it vectorises without checking for overlap.
template <typename Op, typename T>
void loop(T* dst, const T* a, const T* b, std::int64_t count) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < count; ++i) dst[i] = Op::apply(a[i], b[i]);
}

// 16-bit floats: widen, combine in f32, round once.
template <typename Op, float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
void loop16(std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b, std::int64_t count) {
#pragma GCC ivdep
  for (std::int64_t i = 0; i < count; ++i) dst[i] = Narrow(Op::apply(Widen(a[i]), Widen(b[i])));
}

template <typename T>
void typed(T* dst, const void* a, const void* b, std::int64_t count, Reduction op) {
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  switch (op) {
    case Reduction::sum: return loop<Sum<T>>(dst, x, y, count);
    case Reduction::prod: return loop<Prod<T>>(dst, x, y, count);
    case Reduction::max: return loop<Max<T>>(dst, x, y, count);
    case Reduction::min: return loop<Min<T>>(dst, x, y, count);
  }
}

template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
void typed16(void* dst, const void* a, const void* b, std::int64_t count, Reduction op) {
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  switch (op) {
    case Reduction::sum: return loop16<Sum<float>, Widen, Narrow>(d, x, y, count);
    case Reduction::prod: return loop16<Prod<float>, Widen, Narrow>(d, x, y, count);
    case Reduction::max: return loop16<Max<float>, Widen, Narrow>(d, x, y, count);
    case Reduction::min: return loop16<Min<float>, Widen, Narrow>(d, x, y, count);
  }
}

// The body of combine_generic and combine_avx2.
inline void combine_loops(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count) {
  switch (dtype) {
    case DType::f32: return typed(static_cast<float*>(dst), a, b, count, op);
    case DType::f64: return typed(static_cast<double*>(dst), a, b, count, op);
    case DType::f16: return typed16<half_to_float, float_to_half>(dst, a, b, count, op);
    case DType::bf16: return typed16<bf16_to_float, float_to_bf16>(dst, a, b, count, op);
    case DType::i32: return typed(static_cast<std::int32_t*>(dst), a, b, count, op);
    case DType::i64: return typed(static_cast<std::int64_t*>(dst), a, b, count, op);
    case DType::i8: return typed(static_cast<std::int8_t*>(dst), a, b, count, op);
    case DType::u8: return typed(static_cast<std::uint8_t*>(dst), a, b, count, op);
  }
}

}  // namespace

}  // namespace dtrain::device::cpu
