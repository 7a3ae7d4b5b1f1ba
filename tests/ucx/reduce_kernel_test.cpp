// The CPU reduction kernels and the 16-bit float conversions under them.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "device/cpu/half.hpp"
#include "device/cpu/reduce.hpp"
#include "device/cpu/reduce_loops.hpp"

namespace dtrain::device::cpu {
namespace {

// Rounding a float to bf16 the slow, obvious way: keep the top 16 bits and
// add one unit when what is cut off is more than half, or exactly half and
// the kept part is odd.
std::uint16_t bf16_reference(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);
  std::uint32_t kept = bits >> 16;
  const std::uint32_t cut = bits & 0xffff;
  if (cut > 0x8000 || (cut == 0x8000 && (kept & 1))) ++kept;
  return static_cast<std::uint16_t>(kept);
}

#ifdef __FLT16_MAX__
TEST(HalfConversion, EveryHalfWidensExactly) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    _Float16 value;
    const auto bits = static_cast<std::uint16_t>(h);
    std::memcpy(&value, &bits, 2);
    const float expected = static_cast<float>(value);
    const float got = half_to_float(bits);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      ASSERT_EQ(std::memcmp(&expected, &got, 4), 0) << std::hex << h << ": " << expected << " vs " << got;
    }
  }
}

TEST(HalfConversion, NarrowingRoundsToNearestEven) {
  // Every float whose low 12 bits are one of a few patterns (exact, below,
  // at and above the rounding point), over the whole exponent range.
  for (std::uint32_t high = 0; high < (1u << 20); ++high) {
    for (std::uint32_t low : {0x000u, 0x7ffu, 0x800u, 0x801u, 0xfffu, 0x1000u, 0x1800u}) {
      const std::uint32_t bits = (high << 12) | low;
      float value;
      std::memcpy(&value, &bits, 4);
      const _Float16 expected = static_cast<_Float16>(value);
      std::uint16_t expected_bits;
      std::memcpy(&expected_bits, &expected, 2);
      const std::uint16_t got = float_to_half(value);
      if (std::isnan(value)) {
        ASSERT_EQ(got & 0x7c00, 0x7c00) << std::hex << bits;
        ASSERT_NE(got & 0x03ff, 0) << std::hex << bits;
      } else {
        ASSERT_EQ(got, expected_bits) << std::hex << bits << " (" << value << ")";
      }
    }
  }
}
#endif

TEST(HalfConversion, KnownValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(half_to_float(0x0001), 5.9604645e-8f);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
}

TEST(Bf16Conversion, NarrowingRoundsToNearestEven) {
  for (std::uint32_t high = 0; high < (1u << 16); ++high) {
    for (std::uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const std::uint32_t bits = (high << 16) | low;
      float value;
      std::memcpy(&value, &bits, 4);
      const std::uint16_t got = float_to_bf16(value);
      if (std::isnan(value)) {
        ASSERT_TRUE(std::isnan(bf16_to_float(got))) << std::hex << bits;
      } else {
        ASSERT_EQ(got, bf16_reference(value)) << std::hex << bits;
      }
    }
  }
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
}

template <typename T>
std::vector<T> run(Reduction op, DType dtype, std::vector<T> dst, const std::vector<T>& src) {
  reduce(op, dtype, dst.data(), src.data(), static_cast<std::int64_t>(dst.size()));
  return dst;
}

TEST(ReduceKernel, Float32And64) {
  const std::vector<float> a{1.5f, -2.0f, 3.0f, 0.0f, 7.0f, -1.0f, 2.0f, 9.0f, 4.0f};
  const std::vector<float> b{0.5f, 4.0f, -3.0f, 2.0f, -7.0f, -1.0f, 0.5f, 1.0f, 4.0f};
  std::vector<float> sum, prod, max, min;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sum.push_back(a[i] + b[i]);
    prod.push_back(a[i] * b[i]);
    max.push_back(std::max(a[i], b[i]));
    min.push_back(std::min(a[i], b[i]));
  }
  EXPECT_EQ(run(Reduction::sum, DType::f32, a, b), sum);
  EXPECT_EQ(run(Reduction::prod, DType::f32, a, b), prod);
  EXPECT_EQ(run(Reduction::max, DType::f32, a, b), max);
  EXPECT_EQ(run(Reduction::min, DType::f32, a, b), min);

  const std::vector<double> c{1e300, -1.0, 0.25}, d{1e300, 3.0, 0.25};
  EXPECT_EQ(run(Reduction::sum, DType::f64, c, d), (std::vector<double>{2e300, 2.0, 0.5}));
  EXPECT_EQ(run(Reduction::prod, DType::f64, c, d)[2], 0.0625);
  EXPECT_TRUE(std::isinf(run(Reduction::prod, DType::f64, c, d)[0]));
}

TEST(ReduceKernel, IntegersWrap) {
  EXPECT_EQ(run<std::int8_t>(Reduction::sum, DType::i8, {127, -128, 5}, {1, -1, -10}),
            (std::vector<std::int8_t>{-128, 127, -5}));
  EXPECT_EQ(run<std::int8_t>(Reduction::prod, DType::i8, {16, -3, 7}, {16, 5, -1}),
            (std::vector<std::int8_t>{0, -15, -7}));
  EXPECT_EQ(run<std::uint8_t>(Reduction::sum, DType::u8, {250, 1}, {10, 2}), (std::vector<std::uint8_t>{4, 3}));
  EXPECT_EQ(run<std::uint8_t>(Reduction::prod, DType::u8, {200, 3}, {2, 5}), (std::vector<std::uint8_t>{144, 15}));
  EXPECT_EQ(run<std::uint8_t>(Reduction::max, DType::u8, {200, 3}, {2, 5}), (std::vector<std::uint8_t>{200, 5}));
  EXPECT_EQ(run<std::int8_t>(Reduction::min, DType::i8, {-100, 3}, {2, 5}), (std::vector<std::int8_t>{-100, 3}));
  const std::int32_t big = std::numeric_limits<std::int32_t>::max();
  EXPECT_EQ(run<std::int32_t>(Reduction::sum, DType::i32, {big, -7}, {1, 3}),
            (std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(), -4}));
  EXPECT_EQ(run<std::int32_t>(Reduction::prod, DType::i32, {65536, -3}, {65536, 3}),
            (std::vector<std::int32_t>{0, -9}));
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(run<std::int64_t>(Reduction::sum, DType::i64, {huge, 5}, {1, -6}),
            (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), -1}));
  EXPECT_EQ(run<std::int64_t>(Reduction::prod, DType::i64, {1ll << 40, -4}, {1ll << 30, 5}),
            (std::vector<std::int64_t>{0, -20}));
  EXPECT_EQ(run<std::int64_t>(Reduction::max, DType::i64, {-1, 5}, {-2, 6}), (std::vector<std::int64_t>{-1, 6}));
  EXPECT_EQ(run<std::int64_t>(Reduction::min, DType::i64, {-1, 5}, {-2, 6}), (std::vector<std::int64_t>{-2, 5}));
}

TEST(ReduceKernel, HalfComputesInFloatAndRoundsOnce) {
  // 1 + 2^-11 lies exactly between two halves: ties go to the even one.
  EXPECT_EQ(run<std::uint16_t>(Reduction::sum, DType::f16, {0x3c00}, {0x1000}), (std::vector<std::uint16_t>{0x3c00}));
  EXPECT_EQ(run<std::uint16_t>(Reduction::sum, DType::f16, {0x3c01}, {0x1000}), (std::vector<std::uint16_t>{0x3c02}));
  // 1.5 * 1.5 = 2.25, exact; max/min compare values, not bits (-1 < 1).
  EXPECT_EQ(run<std::uint16_t>(Reduction::prod, DType::f16, {0x3e00}, {0x3e00}), (std::vector<std::uint16_t>{0x4080}));
  EXPECT_EQ(run<std::uint16_t>(Reduction::max, DType::f16, {0xbc00}, {0x3c00}), (std::vector<std::uint16_t>{0x3c00}));
  EXPECT_EQ(run<std::uint16_t>(Reduction::min, DType::f16, {0xbc00}, {0x3c00}), (std::vector<std::uint16_t>{0xbc00}));
  // 65504 + 32 overflows binary16 and rounds to infinity.
  EXPECT_EQ(run<std::uint16_t>(Reduction::sum, DType::f16, {0x7bff}, {0x5000}), (std::vector<std::uint16_t>{0x7c00}));
}

TEST(ReduceKernel, Bf16ComputesInFloatAndRoundsOnce) {
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
  EXPECT_EQ(run<std::uint16_t>(Reduction::sum, DType::bf16, {0x3f80}, {0x3b80}), (std::vector<std::uint16_t>{0x3f80}));
  EXPECT_EQ(run<std::uint16_t>(Reduction::sum, DType::bf16, {0x3f81}, {0x3b80}), (std::vector<std::uint16_t>{0x3f82}));
  EXPECT_EQ(run<std::uint16_t>(Reduction::prod, DType::bf16, {0x4000}, {0xc040}), (std::vector<std::uint16_t>{0xc0c0}));
  EXPECT_EQ(run<std::uint16_t>(Reduction::max, DType::bf16, {0xbf80}, {0x3f80}), (std::vector<std::uint16_t>{0x3f80}));
  EXPECT_EQ(run<std::uint16_t>(Reduction::min, DType::bf16, {0xbf80}, {0x3f80}), (std::vector<std::uint16_t>{0xbf80}));
}

TEST(ReduceKernel, LongBuffersMatchElementwiseReference) {
  // Long enough for the vector loops and their remainders.
  for (std::int64_t n : {0, 1, 15, 16, 17, 1027}) {
    std::vector<std::uint16_t> a(n), b(n);
    std::vector<float> fa(n), fb(n);
    for (std::int64_t i = 0; i < n; ++i) {
      fa[i] = static_cast<float>(i % 97) * 0.37f - 11.0f;
      fb[i] = static_cast<float>(i % 13) * 1.13f + 0.5f;
      a[i] = float_to_half(fa[i]);
      b[i] = float_to_half(fb[i]);
    }
    auto got = run(Reduction::sum, DType::f16, a, b);
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], float_to_half(half_to_float(a[i]) + half_to_float(b[i]))) << i;
    }
    std::vector<float> sum = fa;
    reduce(Reduction::sum, DType::f32, sum.data(), fb.data(), n);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], fa[i] + fb[i]);
  }
}

TEST(ReduceKernel, SameBufferTwice) {
  std::vector<float> a{1.0f, -2.0f, 3.0f};
  reduce(Reduction::sum, DType::f32, a.data(), a.data(), 3);
  EXPECT_EQ(a, (std::vector<float>{2.0f, -4.0f, 6.0f}));
  reduce(Reduction::max, DType::f32, a.data(), a.data(), 3);
  EXPECT_EQ(a, (std::vector<float>{2.0f, -4.0f, 6.0f}));
}

// Random bits of `bytes` bytes: every float class (NaN, infinity,
// subnormal) turns up for the 16- and 32-bit types.
std::vector<unsigned char> random_bytes(std::size_t bytes, std::uint32_t seed) {
  std::vector<unsigned char> out(bytes);
  for (auto& byte : out) {
    seed = seed * 1664525u + 1013904223u;
    byte = static_cast<unsigned char>(seed >> 24);
  }
  return out;
}

constexpr DType kAllTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16,
                               DType::i32, DType::i64, DType::i8,  DType::u8};
constexpr Reduction kAllReductions[] = {Reduction::sum, Reduction::prod, Reduction::max, Reduction::min};

TEST(ReduceKernel, ThreeOperandsMatchCopyThenReduce) {
  for (DType dtype : kAllTypes) {
    for (Reduction op : kAllReductions) {
      for (std::int64_t n : {0, 1, 31, 1027}) {
        const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dtype);
        const auto a = random_bytes(bytes, 7);
        const auto b = random_bytes(bytes, 11);
        auto want = a;
        reduce(op, dtype, want.data(), b.data(), n);
        std::vector<unsigned char> apart(bytes), into_a = a, into_b = b;
        reduce(op, dtype, apart.data(), a.data(), b.data(), n);
        reduce(op, dtype, into_a.data(), into_a.data(), b.data(), n);
        reduce(op, dtype, into_b.data(), a.data(), into_b.data(), n);
        const std::string what = std::string(dtype_name(dtype)) + " op " + std::to_string(static_cast<int>(op)) +
                                 ", " + std::to_string(n) + " elements";
        EXPECT_EQ(apart, want) << what;
        EXPECT_EQ(into_a, want) << what << ", into a";
        EXPECT_EQ(into_b, want) << what << ", into b";
      }
    }
  }
}

#ifdef DTRAIN_REDUCE_AVX2
TEST(ReduceKernel, AvxLoopsGiveTheBaselinesBits) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c")) {
    GTEST_SKIP() << "this CPU lacks AVX2 or F16C: only the baseline loops run";
  }
  // Lengths around the vector widths, so that every remainder path runs.
  for (DType dtype : kAllTypes) {
    for (Reduction op : kAllReductions) {
      for (std::int64_t n : {1, 3, 8, 15, 16, 17, 33, 64, 65, 4099}) {
        const std::size_t bytes = static_cast<std::size_t>(n) * dtype_size(dtype);
        const auto a = random_bytes(bytes, 3);
        const auto b = random_bytes(bytes, 5);
        std::vector<unsigned char> baseline(bytes), avx(bytes);
        combine_generic(op, dtype, baseline.data(), a.data(), b.data(), n);
        combine_avx2(op, dtype, avx.data(), a.data(), b.data(), n);
        ASSERT_EQ(avx, baseline) << dtype_name(dtype) << " op " << static_cast<int>(op) << ", " << n << " elements";
      }
    }
  }
}
#endif

TEST(DivideKernel, AveragesRoundOnce) {
  std::vector<float> f{3.0f, 1.0f};
  divide(DType::f32, f.data(), 2, 3.0);
  EXPECT_EQ(f, (std::vector<float>{1.0f, 1.0f / 3.0f}));
  std::vector<double> d{1.0};
  divide(DType::f64, d.data(), 1, 3.0);
  EXPECT_EQ(d[0], 1.0 / 3.0);
  std::vector<std::uint16_t> h{0x3c00};
  divide(DType::f16, h.data(), 1, 3.0);
  EXPECT_EQ(h[0], 0x3555);  // the half nearest 1/3
  std::vector<std::uint16_t> b{0x3f80};
  divide(DType::bf16, b.data(), 1, 3.0);
  EXPECT_EQ(b[0], 0x3eab);  // the bf16 nearest 1/3
}

}  // namespace
}  // namespace dtrain::device::cpu
