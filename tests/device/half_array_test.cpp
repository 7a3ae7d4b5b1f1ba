// The f16 array conversions (device/cpu/half_array.hpp), each path against
// the element-by-element reference (device/cpu/half.hpp) bit for bit, and the
// reference's NaN rule, which the CUDA intrinsics set.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.hpp"
#include "device/cpu/convert.hpp"
#include "device/cpu/half.hpp"
#include "device/cpu/half_array.hpp"

namespace dtrain::device::cpu {
namespace {

// Array lengths: none, tails alone (1, 7), one block of eight, a block and a
// tail (9), many blocks and a tail (1023).
const std::int64_t kLengths[] = {0, 1, 7, 8, 9, 1023};
// 1 is how casts call; the others round after scaling, and 0 makes NaNs of
// infinities in the multiply, which must stay the multiply's NaNs.
const float kScales[] = {1.0f, 0.5f, 3.0f, 0.0f};

std::vector<std::uint16_t> every_half() {
  std::vector<std::uint16_t> all(1 << 16);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  return all;
}

// Floats with every value of the top 20 bits (both signs, every exponent,
// the mantissa bits that f16 keeps and the first one it drops, so exact ties
// at every subnormal rounding point), each with low bits that put it just
// below, at and just above the normal rounding point, or between: signed
// zeros, infinities, subnormals, and NaNs with many payloads, quiet and
// signalling, among them.
std::vector<float> float_sweep() {
  const std::uint32_t lows[] = {0x000u, 0x001u, 0x7ffu, 0x800u, 0x801u, 0xfffu};
  std::vector<float> all;
  all.reserve((std::size_t{1} << 20) * std::size(lows));
  for (std::uint32_t high = 0; high < (1u << 20); ++high) {
    for (const std::uint32_t low : lows) all.push_back(std::bit_cast<float>((high << 12) | low));
  }
  return all;
}

// The loops' widening of `in` against the reference, running the input
// through in calls of `length` elements (the last one shorter), so that
// every value passes through the path's blocks or its tail.
void expect_widening(const HalfLoops& loops, const std::vector<std::uint16_t>& in, float scale,
                     std::int64_t length) {
  const auto count = static_cast<std::int64_t>(in.size());
  std::vector<float> out(in.size());
  for (std::int64_t at = 0; at < count; at += std::max<std::int64_t>(length, 1)) {
    loops.widen(in.data() + at, out.data() + at, std::min(length, count - at), scale);
  }
  if (length == 0) return;  // nothing written, nothing to compare
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint32_t expected = std::bit_cast<std::uint32_t>(half_to_float(in[i]) * scale);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]), expected)
        << std::hex << "f16 0x" << in[i] << " scale " << scale << " length " << std::dec << length;
  }
}

void expect_narrowing(const HalfLoops& loops, const std::vector<float>& in, float scale, std::int64_t length) {
  const auto count = static_cast<std::int64_t>(in.size());
  std::vector<std::uint16_t> out(in.size());
  for (std::int64_t at = 0; at < count; at += std::max<std::int64_t>(length, 1)) {
    loops.narrow(in.data() + at, out.data() + at, std::min(length, count - at), scale);
  }
  if (length == 0) return;
  for (std::size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i], float_to_half(in[i] * scale))
        << std::hex << "f32 0x" << std::bit_cast<std::uint32_t>(in[i]) << " scale " << scale << " length "
        << std::dec << length;
  }
}

// A call of `length` elements writes those and nothing after them.
void expect_bounded_writes(const HalfLoops& loops) {
  for (const std::int64_t length : kLengths) {
    const std::vector<std::uint16_t> halves(static_cast<std::size_t>(length), 0x3c00);  // 1.0
    const std::vector<float> floats(static_cast<std::size_t>(length), 1.0f);
    std::vector<float> wide(halves.size() + 8, -7.0f);
    std::vector<std::uint16_t> narrow(floats.size() + 8, 0xabcd);
    loops.widen(halves.data(), wide.data(), length, 2.0f);
    loops.narrow(floats.data(), narrow.data(), length, 2.0f);
    for (std::size_t i = 0; i < wide.size(); ++i) {
      const bool written = static_cast<std::int64_t>(i) < length;
      ASSERT_EQ(wide[i], written ? 2.0f : -7.0f) << "length " << length << ", element " << i;
      ASSERT_EQ(narrow[i], written ? 0x4000 : 0xabcd) << "length " << length << ", element " << i;
    }
  }
}

// Every length without a scale, as casts call; every scale in one call.
void expect_every_half_widens(const HalfLoops& loops) {
  const auto halves = every_half();
  for (const std::int64_t length : kLengths) expect_widening(loops, halves, 1.0f, length);
  for (const float scale : kScales) expect_widening(loops, halves, scale, static_cast<std::int64_t>(halves.size()));
}

void expect_sweep_narrows(const HalfLoops& loops) {
  const auto floats = float_sweep();
  for (const std::int64_t length : kLengths) expect_narrowing(loops, floats, 1.0f, length);
  for (const float scale : kScales) expect_narrowing(loops, floats, scale, static_cast<std::int64_t>(floats.size()));
}

// The F16C loops, or a skip saying why there are none.
#define F16C_LOOPS_OR_SKIP(name)                                                          \
  const HalfLoops* name = f16c_half_loops();                                              \
  if (name == nullptr) GTEST_SKIP() << "this CPU lacks F16C or AVX (or is not x86-64)"

TEST(HalfArrays, PortableLoopsWidenEveryHalfAsTheReference) { expect_every_half_widens(portable_half_loops()); }

TEST(HalfArrays, PortableLoopsNarrowAsTheReference) { expect_sweep_narrows(portable_half_loops()); }

TEST(HalfArrays, PortableLoopsWriteOnlyCountElements) { expect_bounded_writes(portable_half_loops()); }

TEST(HalfArrays, F16cWidensEveryHalfAsTheReference) {
  F16C_LOOPS_OR_SKIP(loops);
  expect_every_half_widens(*loops);
}

TEST(HalfArrays, F16cNarrowsAsTheReference) {
  F16C_LOOPS_OR_SKIP(loops);
  expect_sweep_narrows(*loops);
}

TEST(HalfArrays, F16cWritesOnlyCountElements) {
  F16C_LOOPS_OR_SKIP(loops);
  expect_bounded_writes(*loops);
}

// scaled_copy's f16 <-> f32 pairs go through the array calls, whichever path
// this CPU takes.
TEST(HalfArrays, ScaledCopyConvertsAsTheReference) {
  const auto halves = every_half();
  std::vector<float> wide(halves.size());
  scaled_copy(DType::f16, halves.data(), DType::f32, wide.data(), static_cast<std::int64_t>(halves.size()), 0.5);
  for (std::size_t i = 0; i < halves.size(); ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(wide[i]), std::bit_cast<std::uint32_t>(half_to_float(halves[i]) * 0.5f))
        << std::hex << halves[i];
  }
  const auto floats = float_sweep();
  std::vector<std::uint16_t> narrow(floats.size());
  scaled_copy(DType::f32, floats.data(), DType::f16, narrow.data(), static_cast<std::int64_t>(floats.size()), 3.0);
  for (std::size_t i = 0; i < floats.size(); ++i) {
    ASSERT_EQ(narrow[i], float_to_half(floats[i] * 3.0f)) << std::hex << std::bit_cast<std::uint32_t>(floats[i]);
  }
}

// Every NaN converts to CUDA's canonical NaN, whatever its sign and payload,
// and nothing else does.
TEST(HalfReference, EveryNanBecomesTheCanonicalNan) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const bool f16_nan = (h & 0x7fffu) > 0x7c00u;
    const bool bf16_nan = (h & 0x7fffu) > 0x7f80u;
    const auto half = std::bit_cast<std::uint32_t>(half_to_float(bits));
    const auto bf16 = std::bit_cast<std::uint32_t>(bf16_to_float(bits));
    ASSERT_EQ(half == 0x7fffffffu, f16_nan) << std::hex << h;
    // bf16 is f32's top half: widening is exact but for NaNs.
    ASSERT_EQ(bf16, bf16_nan ? 0x7fffffffu : h << 16) << std::hex << h;
  }
  for (const std::uint32_t sign : {0u, 0x80000000u}) {
    for (const std::uint32_t payload : {0x1u, 0x1fffu, 0x2000u, 0x3ff000u, 0x400000u, 0x400001u, 0x7fffffu}) {
      const float nan = std::bit_cast<float>(sign | 0x7f800000u | payload);
      EXPECT_EQ(float_to_half(nan), 0x7fff) << std::hex << std::bit_cast<std::uint32_t>(nan);
      EXPECT_EQ(float_to_bf16(nan), 0x7fff) << std::hex << std::bit_cast<std::uint32_t>(nan);
    }
  }
  EXPECT_EQ(float_to_half(std::bit_cast<float>(0xff800000u)), 0xfc00);  // -infinity stays itself
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0xff800000u)), 0xff80);
}

}  // namespace
}  // namespace dtrain::device::cpu
