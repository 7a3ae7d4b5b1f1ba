// The element-wise loops of reduce(), written once and compiled once per
// instruction set: reduce_generic.cpp with the build's flags, and on x86-64
// reduce_avx2.cpp with AVX2 and F16C, which reduce.cpp picks when the CPU
// has both. They are plain loops that GCC vectorises at -O3 (see
// CMakeLists.txt), but for f16 with F16C: GCC cannot see half.hpp's
// conversions as vcvtph2ps/vcvtps2ph, so that loop is written with them.
// Every variant computes each element alone, in the same order of
// operations, so all give the same bits. Integer sums and products wrap
// (device/wide.hpp).
//
// Everything but the entry points is in an anonymous namespace, so that the
// copies compiled with different flags stay apart.
#pragma once

#include <cstdint>
#include <type_traits>

#ifdef DTRAIN_REDUCE_LOOPS_WITH_AVX2
#include <immintrin.h>
#endif

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
#pragma GCC target("avx2,f16c")
#endif

namespace dtrain::device::cpu {

// dst[i] = a[i] op b[i]; dst is a or b, or overlaps neither.
void combine_generic(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count);
#if defined(__x86_64__)
#define DTRAIN_REDUCE_AVX2 1  // reduce_avx2.cpp is built (CMakeLists.txt); call it only where the CPU has AVX2 and F16C
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

#ifdef DTRAIN_REDUCE_LOOPS_WITH_AVX2
// f16 eight at a time: widen exactly, combine in f32 as Op does (max and
// min keep Op's choice when a NaN is involved: maxps returns its second
// operand when unordered), round to nearest even, and make every NaN lane
// half.hpp's canonical NaN, so the bits are the scalar loop's. The last
// count % 8 take the scalar loop.
template <typename Op>
__m256 combine8(__m256 a, __m256 b) {
  if constexpr (std::is_same_v<Op, Sum<float>>) return _mm256_add_ps(a, b);
  if constexpr (std::is_same_v<Op, Prod<float>>) return _mm256_mul_ps(a, b);
  if constexpr (std::is_same_v<Op, Max<float>>) return _mm256_max_ps(b, a);  // b > a ? b : a
  if constexpr (std::is_same_v<Op, Min<float>>) return _mm256_min_ps(b, a);  // b < a ? b : a
}

template <typename Op>
void loop_f16(std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b, std::int64_t count) {
  const __m128i canonical = _mm_set1_epi16(static_cast<short>(kCanonicalNan16));
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    const __m256 result = combine8<Op>(x, y);
    const __m128i halves = _mm256_cvtps_ph(result, _MM_FROUND_TO_NEAREST_INT);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(result, result, _CMP_UNORD_Q));
    const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
    // and/andnot/or rather than a blend, as device/cpu/half_array.cpp says why.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_or_si128(_mm_andnot_si128(nan16, halves), _mm_and_si128(nan16, canonical)));
  }
  loop16<Op, half_to_float, float_to_half>(dst + i, a + i, b + i, count - i);
}
#endif

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

#ifdef DTRAIN_REDUCE_LOOPS_WITH_AVX2
void typed_f16c(void* dst, const void* a, const void* b, std::int64_t count, Reduction op) {
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* x = static_cast<const std::uint16_t*>(a);
  const auto* y = static_cast<const std::uint16_t*>(b);
  switch (op) {
    case Reduction::sum: return loop_f16<Sum<float>>(d, x, y, count);
    case Reduction::prod: return loop_f16<Prod<float>>(d, x, y, count);
    case Reduction::max: return loop_f16<Max<float>>(d, x, y, count);
    case Reduction::min: return loop_f16<Min<float>>(d, x, y, count);
  }
}
#endif

// The body of combine_generic and combine_avx2.
inline void combine_loops(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count) {
  switch (dtype) {
    case DType::f32: return typed(static_cast<float*>(dst), a, b, count, op);
    case DType::f64: return typed(static_cast<double*>(dst), a, b, count, op);
#ifdef DTRAIN_REDUCE_LOOPS_WITH_AVX2
    case DType::f16: return typed_f16c(dst, a, b, count, op);
#else
    case DType::f16: return typed16<half_to_float, float_to_half>(dst, a, b, count, op);
#endif
    case DType::bf16: return typed16<bf16_to_float, float_to_bf16>(dst, a, b, count, op);
    case DType::i32: return typed(static_cast<std::int32_t*>(dst), a, b, count, op);
    case DType::i64: return typed(static_cast<std::int64_t*>(dst), a, b, count, op);
    case DType::i8: return typed(static_cast<std::int8_t*>(dst), a, b, count, op);
    case DType::u8: return typed(static_cast<std::uint8_t*>(dst), a, b, count, op);
  }
}

}  // namespace

}  // namespace dtrain::device::cpu
