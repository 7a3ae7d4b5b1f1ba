// Blockwise attention on the test's place (device/attention.hpp), forward,
// backward and merge, against the double reference the context-parallel
// tests use (cp/reference_attention.hpp), within 1e-5 of the reference's
// largest magnitude. On the host this is OpenBLAS and the CPU's runs and
// tiles; on a GPU, cuBLAS and the masking kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cp/reference_attention.hpp"
#include "device/attention.hpp"
#include "placed_tensor.hpp"

namespace dtrain::test {
namespace {

using testing::AttentionCase;
using testing::expect_close;
using testing::reference_attention;

constexpr double kTolerance = 1e-5;

std::vector<float> floats(const std::vector<double>& values) { return {values.begin(), values.end()}; }
std::vector<double> doubles(const std::vector<float>& values) { return {values.begin(), values.end()}; }
std::vector<double> doubles(const std::vector<std::int64_t>& values) { return {values.begin(), values.end()}; }

template <typename T>
T* data(PlacedTensor& tensor) {
  return static_cast<T*>(tensor.view().data);
}

// A block of queries against a block of keys with interleaved positions, so
// that the causal mask cuts through it, placed where the test runs.
struct Block {
  AttentionCase c;
  std::vector<float> q, k, v, d_o;
  std::vector<std::int64_t> q_pos, k_pos;
  PlacedTensor tq, tk, tv, td_o, tq_pos, tk_pos;
  device::Queue& queue;

  Block(AttentionCase shape, unsigned seed, std::int64_t first_key = 0)
      : c(shape),
        q(testing::random_values(static_cast<std::size_t>(c.seq * c.q_heads * c.head_dim), seed)),
        k(testing::random_values(static_cast<std::size_t>(c.kv_seq * c.kv_heads * c.head_dim), seed + 1)),
        v(testing::random_values(k.size(), seed + 2)),
        d_o(testing::random_values(q.size(), seed + 3)),
        q_pos(positions(c.seq, 3, 1)),
        k_pos(positions(c.kv_seq, 2, first_key)),
        tq(DType::f32, doubles(q)), tk(DType::f32, doubles(k)), tv(DType::f32, doubles(v)),
        td_o(DType::f32, doubles(d_o)), tq_pos(DType::i64, doubles(q_pos)), tk_pos(DType::i64, doubles(k_pos)),
        queue(device::thread_queue(tq.view())) {}

  static std::vector<std::int64_t> positions(std::int64_t n, std::int64_t step, std::int64_t first) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < n; ++i) out.push_back(first + step * i);
    return out;
  }

  device::AttentionShape shape() const {
    return {c.seq, c.kv_seq, c.q_heads, c.kv_heads, c.head_dim, c.causal, c.scale};
  }
  device::AttentionPositions at() { return {data<const std::int64_t>(tq_pos), data<const std::int64_t>(tk_pos)}; }

  void forward(PlacedTensor& o, PlacedTensor& lse) {
    device::attention_forward(queue, shape(), data<const float>(tq), data<const float>(tk), data<const float>(tv),
                              at(), data<float>(o), data<float>(lse));
    queue.synchronize();
  }
};

const AttentionCase kCases[] = {
    {5, 7, 2, 2, 8, false, 0.35}, {5, 7, 4, 2, 8, true, 0.35}, {9, 6, 6, 1, 4, true, 0.5}, {3, 11, 2, 1, 16, false, 0.25}};

std::string name(const AttentionCase& c) {
  return "seq " + std::to_string(c.seq) + "x" + std::to_string(c.kv_seq) + ", heads " + std::to_string(c.q_heads) +
         "/" + std::to_string(c.kv_heads) + (c.causal ? ", causal" : "");
}

TEST(Attention, ForwardMatchesDoubleReference) {
  DT_REQUIRE_PLACE();
  for (const AttentionCase& c : kCases) {
    Block block(c, 21);
    auto o = PlacedTensor::poisoned(DType::f32, block.q.size());
    auto lse = PlacedTensor::poisoned(DType::f32, static_cast<std::size_t>(c.seq * c.q_heads));
    block.forward(o, lse);
    const auto want = reference_attention(c, block.q, block.k, block.v, block.q_pos, block.k_pos, {});
    expect_close(floats(o.read()), want.o, kTolerance, "o, " + name(c));
    expect_close(floats(lse.read()), want.lse, kTolerance, "lse, " + name(c));
  }
}

TEST(Attention, QueryThatSeesNoKeyGetsZeroAndMinusInfinity) {
  DT_REQUIRE_PLACE();
  // Every key after every query.
  Block block({4, 3, 2, 2, 4, true, 0.5}, 5, 1000);
  auto o = PlacedTensor::poisoned(DType::f32, block.q.size());
  auto lse = PlacedTensor::poisoned(DType::f32, 8);
  block.forward(o, lse);
  EXPECT_EQ(o.read(), std::vector<double>(block.q.size(), 0.0));
  EXPECT_EQ(lse.read(), std::vector<double>(8, -std::numeric_limits<double>::infinity()));
}

TEST(Attention, BackwardAddsTheReferenceGradients) {
  DT_REQUIRE_PLACE();
  for (const AttentionCase& c : kCases) {
    Block block(c, 31);
    const auto want = reference_attention(c, block.q, block.k, block.v, block.q_pos, block.k_pos, block.d_o);
    PlacedTensor o(DType::f32, want.o);
    PlacedTensor lse(DType::f32, want.lse);
    auto delta = PlacedTensor::poisoned(DType::f32, want.lse.size());
    device::attention_output_dot(block.queue, c.seq, c.q_heads, c.head_dim, data<const float>(block.td_o),
                                 data<const float>(o), data<float>(delta));
    // The gradients add to what the buffers hold: start from ones.
    PlacedTensor dq(DType::f32, std::vector<double>(block.q.size(), 1.0));
    PlacedTensor dk(DType::f32, std::vector<double>(block.k.size(), 1.0));
    PlacedTensor dv(DType::f32, std::vector<double>(block.k.size(), 1.0));
    device::attention_backward(block.queue, block.shape(),
                               {data<const float>(block.tq), data<const float>(block.tk), data<const float>(block.tv),
                                data<const float>(block.td_o), data<const float>(lse), data<const float>(delta)},
                               block.at(), data<float>(dq), data<float>(dk), data<float>(dv));
    block.queue.synchronize();
    auto plus_one = [](std::vector<double> values) {
      for (double& x : values) x += 1.0;
      return values;
    };
    expect_close(floats(dq.read()), plus_one(want.dq), kTolerance, "dq, " + name(c));
    expect_close(floats(dk.read()), plus_one(want.dk), kTolerance, "dk, " + name(c));
    expect_close(floats(dv.read()), plus_one(want.dv), kTolerance, "dv, " + name(c));
  }
}

TEST(Attention, MergingTwoKeyBlocksGivesAttentionOverBoth) {
  DT_REQUIRE_PLACE();
  const AttentionCase whole{6, 10, 4, 2, 8, true, 0.3};
  Block all(whole, 41);
  // The same keys in two blocks: the first five and the last five.
  AttentionCase half = whole;
  half.kv_seq = 5;
  Block first(half, 41), second(half, 41, 10);
  const std::size_t kv_half = first.k.size();
  auto place = [&](Block& b, std::size_t from) {
    b.k.assign(all.k.begin() + from, all.k.begin() + from + kv_half);
    b.v.assign(all.v.begin() + from, all.v.begin() + from + kv_half);
    b.tk = PlacedTensor(DType::f32, doubles(b.k));
    b.tv = PlacedTensor(DType::f32, doubles(b.v));
  };
  place(first, 0);
  place(second, kv_half);
  auto o = PlacedTensor::poisoned(DType::f32, all.q.size());
  auto lse = PlacedTensor::poisoned(DType::f32, 24);
  auto o_other = PlacedTensor::poisoned(DType::f32, all.q.size());
  auto lse_other = PlacedTensor::poisoned(DType::f32, 24);
  first.forward(o, lse);
  second.forward(o_other, lse_other);
  device::attention_merge(all.queue, whole.seq, whole.q_heads, whole.head_dim, data<float>(o), data<float>(lse),
                          data<const float>(o_other), data<const float>(lse_other));
  all.queue.synchronize();
  const auto want = reference_attention(whole, all.q, all.k, all.v, all.q_pos, all.k_pos, {});
  expect_close(floats(o.read()), want.o, kTolerance, "merged o");
  expect_close(floats(lse.read()), want.lse, kTolerance, "merged lse");
}

}  // namespace
}  // namespace dtrain::test
