// The device layer's Queue on the test's place: its copies (a block of a
// matrix through copy_rows included), fills, scaled casts and element-wise
// work land where they should once synchronize() returns; its Buffers are
// zeroed, aligned and handed on by moves; a round trip through pinned host
// memory is done once its Fence is reached.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <utility>

#include "device/buffer.hpp"
#include "device/queue.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

TEST(Queue, CopyRowsMovesABlockOfAMatrix) {
  DT_REQUIRE_PLACE();
  // Columns [2, 5) of a 4 x 6 matrix into columns [1, 4) of a 4 x 5 one.
  const std::size_t rows = 4, src_cols = 6, dst_cols = 5, width = 3;
  Values src(rows * src_cols), dst(rows * dst_cols, -1.0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<double>(i);
  PlacedTensor tsrc(DType::f32, src), tdst(DType::f32, dst);
  const TensorView s = tsrc.view(), d = tdst.view();
  const auto queue = device::make_queue(d);
  queue->copy_rows(static_cast<float*>(d.data) + 1, dst_cols * 4, static_cast<const float*>(s.data) + 2,
                   src_cols * 4, width * 4, rows);
  queue->synchronize();
  Values want = dst;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < width; ++c) want[r * dst_cols + 1 + c] = src[r * src_cols + 2 + c];
  }
  EXPECT_EQ(tdst.read(), want);
}

TEST(Queue, AddDivideAndCastWorkInPlace) {
  DT_REQUIRE_PLACE();
  const Values a = random_values(DType::f32, 37, 1), b = random_values(DType::f32, 37, 2);
  PlacedTensor ta(DType::f32, a), tb(DType::f32, b);
  auto half = PlacedTensor::poisoned(DType::bf16, a.size());
  const TensorView va = ta.view(), vb = tb.view(), vh = half.view();
  const auto queue = device::make_queue(va);
  queue->add(DType::f32, va.data, vb.data, va.count);
  queue->divide(DType::f32, va.data, va.count, 4.0);
  queue->cast(DType::bf16, vh.data, DType::f32, va.data, va.count);
  queue->synchronize();
  Values want(a.size()), want_half(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    want[i] = stored(DType::f32, stored(DType::f32, a[i] + b[i]) / 4.0);
    want_half[i] = stored(DType::bf16, want[i]);
  }
  EXPECT_EQ(ta.read(), want);
  EXPECT_EQ(half.read(), want_half);
}

TEST(Queue, FillConvertsTheValueOnce) {
  DT_REQUIRE_PLACE();
  for (DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    auto t = PlacedTensor::poisoned(dtype, 9);
    const TensorView v = t.view();
    const auto queue = device::make_queue(v);
    queue->fill(dtype, v.data, v.count, 0.1);
    queue->synchronize();
    EXPECT_EQ(t.read(), Values(9, stored(dtype, 0.1))) << dtype_name(dtype);
  }
}

TEST(Queue, ScaledCastRoundsOnceAndCopiesEqualDtypes) {
  DT_REQUIRE_PLACE();
  const Values a = random_values(DType::f32, 41, 3);
  PlacedTensor ta(DType::f32, a);
  auto half = PlacedTensor::poisoned(DType::f16, a.size());
  auto back = PlacedTensor::poisoned(DType::f32, a.size());
  auto same = PlacedTensor::poisoned(DType::f32, a.size());
  const TensorView va = ta.view(), vh = half.view(), vb = back.view(), vs = same.view();
  const auto queue = device::make_queue(va);
  ASSERT_TRUE(queue->can_cast(DType::f32, DType::f16));
  ASSERT_TRUE(queue->can_cast(DType::bf16, DType::f32));
  queue->cast(DType::f16, vh.data, DType::f32, va.data, va.count, 0.25);
  queue->cast(DType::f32, vb.data, DType::f16, vh.data, vh.count, 8.0);
  queue->cast(DType::f32, vs.data, DType::f32, va.data, va.count);
  queue->synchronize();
  Values want_half(a.size()), want_back(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    // In f32, then rounded once to the destination.
    want_half[i] = stored(DType::f16, stored(DType::f32, a[i] * 0.25));
    want_back[i] = stored(DType::f32, want_half[i] * 8.0);
  }
  EXPECT_EQ(half.read(), want_half);
  EXPECT_EQ(back.read(), want_back);
  EXPECT_EQ(same.read(), a);
}

TEST(Queue, BuffersAreZeroedAlignedAndMovedWithoutCopying) {
  DT_REQUIRE_PLACE();
  PlacedTensor like(DType::f32, Values(1, 0.0));
  const auto queue = device::make_queue(like.view());
  device::Buffer buffer(*queue, 24 * sizeof(float));
  ASSERT_TRUE(buffer.allocated());
  EXPECT_EQ(buffer.bytes(), 24 * sizeof(float));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % alignof(std::max_align_t), 0u);
  const TensorView tail = buffer.view(8 * sizeof(float), 16, DType::f32);
  EXPECT_EQ(tail.data, buffer.at(8 * sizeof(float)));
  EXPECT_EQ(tail.memory, queue->memory());
  EXPECT_EQ(tail.stream, queue->stream());

  auto out = PlacedTensor::poisoned(DType::f32, 16);
  queue->copy(out.view().data, tail.data, tail.bytes());
  queue->synchronize();
  EXPECT_EQ(out.read(), Values(16, 0.0));

  void* const data = buffer.data();
  device::Buffer moved = std::move(buffer);
  EXPECT_FALSE(buffer.allocated());  // NOLINT(bugprone-use-after-move): a moved-from Buffer is empty
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(moved.data(), data);
  moved.reset();
  EXPECT_FALSE(moved.allocated());
  moved.reset();  // twice is harmless
}

TEST(Queue, PinnedMemoryRoundTripIsDoneAtItsFence) {
  DT_REQUIRE_PLACE();
  PlacedTensor like(DType::f32, Values(1, 0.0));
  const auto queue = device::make_queue(like.view());
  constexpr std::size_t kCount = 1000;
  auto* out = static_cast<float*>(queue->allocate_pinned(kCount * sizeof(float)));
  auto* back = static_cast<float*>(queue->allocate_pinned(kCount * sizeof(float)));
  for (std::size_t i = 0; i < kCount; ++i) out[i] = static_cast<float>(i) * 0.5f;
  std::memset(back, 0xff, kCount * sizeof(float));
  device::Buffer on_device(*queue, kCount * sizeof(float));
  queue->copy(on_device.data(), out, kCount * sizeof(float));
  queue->copy_rows(back, sizeof(float), on_device.data(), sizeof(float), sizeof(float), kCount);
  const auto fence = queue->fence();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fence->reached()) ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the fence was never reached";
  EXPECT_EQ(std::memcmp(back, out, kCount * sizeof(float)), 0);
  queue->release_pinned(out);
  queue->release_pinned(back);
}

}  // namespace
}  // namespace dtrain::test
