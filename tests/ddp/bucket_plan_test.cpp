// Bucket assignment (reverse registration order, size cap, one wire dtype
// per bucket) and the scaled casts between floating dtypes.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "device/cpu/convert.hpp"
#include "device/cpu/half.hpp"
#include "parallel/ddp/bucket_plan.hpp"

namespace dtrain::test {
namespace {

using device::cpu::scaled_copy;
using parallel::common::BucketPlan;
using parallel::ddp::Compression;
using parallel::ddp::Options;
using parallel::ddp::plan_buckets;

Options with_bucket_bytes(std::int64_t bytes, Compression compression = Compression::none) {
  Options options;
  options.bucket_bytes = bytes;
  options.compression = compression;
  return options;
}

std::vector<std::vector<std::size_t>> members(const std::vector<BucketPlan>& plans) {
  std::vector<std::vector<std::size_t>> result;
  for (const auto& plan : plans) result.push_back(plan.members);
  return result;
}

TEST(BucketPlan, ReverseOrderUpToTheCap) {
  // f32 gradients of 40, 8, 40, 4, 4 bytes with a 16-byte cap.
  const std::vector<DType> dtypes(5, DType::f32);
  const auto plans = plan_buckets(dtypes, {10, 2, 10, 1, 1}, with_bucket_bytes(16));
  EXPECT_EQ(members(plans), (std::vector<std::vector<std::size_t>>{{4, 3, 2}, {1, 0}}));
}

TEST(BucketPlan, DefaultCapMakesOneBucket) {
  const auto plans = plan_buckets(std::vector<DType>(3, DType::f32), {1000, 2000, 3000}, Options{});
  EXPECT_EQ(members(plans), (std::vector<std::vector<std::size_t>>{{2, 1, 0}}));
}

TEST(BucketPlan, OneBucketPerWireDtype) {
  const std::vector<DType> dtypes{DType::f32, DType::f64, DType::f32, DType::bf16};
  auto plans = plan_buckets(dtypes, {4, 4, 4, 4}, Options{});
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].dtype, DType::bf16);
  EXPECT_EQ(plans[1].dtype, DType::f32);
  EXPECT_EQ(plans[1].members, (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(plans[2].dtype, DType::f64);

  // Compressed, f32 and f64 both travel as bf16 and share the bucket.
  plans = plan_buckets(dtypes, {4, 4, 4, 4}, with_bucket_bytes(1 << 20, Compression::bf16));
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].members, (std::vector<std::size_t>{3, 2, 1, 0}));
}

TEST(BucketPlan, CapCountsWireBytes) {
  // 8 f32 elements are 32 bytes, but 16 as f16: two fit under a 32-byte cap.
  const std::vector<DType> dtypes(4, DType::f32);
  EXPECT_EQ(plan_buckets(dtypes, {8, 8, 8, 8}, with_bucket_bytes(32)).size(), 4u);
  EXPECT_EQ(plan_buckets(dtypes, {8, 8, 8, 8}, with_bucket_bytes(32, Compression::f16)).size(), 2u);
}

TEST(Convert, ScalesAndCasts) {
  const std::vector<float> src{1.0f, -2.5f, 3.0f, 1e-3f};
  std::vector<std::uint16_t> bf16(4);
  scaled_copy(DType::f32, src.data(), DType::bf16, bf16.data(), 4, 0.5);
  EXPECT_EQ(device::cpu::bf16_to_float(bf16[0]), 0.5f);
  EXPECT_EQ(device::cpu::bf16_to_float(bf16[1]), -1.25f);
  std::vector<double> back(4);
  scaled_copy(DType::bf16, bf16.data(), DType::f64, back.data(), 4, 2.0);
  EXPECT_EQ(back[2], 3.0);
  EXPECT_NEAR(back[3], 1e-3, 1e-5);

  std::vector<std::uint16_t> f16(4);
  scaled_copy(DType::f32, src.data(), DType::f16, f16.data(), 4, 1.0);
  EXPECT_EQ(f16[0], 0x3c00);
  std::vector<float> same(4);
  scaled_copy(DType::f32, src.data(), DType::f32, same.data(), 4, 1.0);
  EXPECT_EQ(same, src);
  scaled_copy(DType::f32, src.data(), DType::f32, same.data(), 4, 1.0 / 3);
  EXPECT_FLOAT_EQ(same[2], 1.0f);
}

}  // namespace
}  // namespace dtrain::test
