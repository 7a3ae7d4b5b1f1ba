// The local pieces of context parallelism through the C API, in one process:
// blockwise attention and the merge of partial results against the double
// reference (reference_attention.hpp), the layouts' positions and sharding
// against the layout written out here, and the refusals of bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda_device.hpp"
#include "cp/reference_attention.hpp"
#include "cp/require_device.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::AttentionCase;
using dtrain::testing::expect_close;
using dtrain::testing::layout_positions;
using dtrain::testing::random_values;
using dtrain::testing::reference_attention;
using dtrain::testing::TensorOf;
using Floats = std::vector<float>;
using Positions = std::vector<std::int64_t>;

constexpr double kTolerance = 1e-5;

struct Block {
  AttentionCase shape;
  Floats q, k, v;
  Positions q_pos, k_pos;

  explicit Block(AttentionCase c, unsigned seed) : shape(c) {
    q = random_values(static_cast<std::size_t>(c.seq * c.q_heads * c.head_dim), seed);
    k = random_values(static_cast<std::size_t>(c.kv_seq * c.kv_heads * c.head_dim), seed + 1);
    v = random_values(k.size(), seed + 2);
    // Interleaved positions, so that the causal mask cuts through the block.
    for (std::int64_t i = 0; i < c.seq; ++i) q_pos.push_back(3 * i + 1);
    for (std::int64_t j = 0; j < c.kv_seq; ++j) k_pos.push_back(2 * j);
  }

  // dt_cp_attention of the whole block, checking its status.
  void attend(int causal, double scale, Floats& o, Floats& lse) {
    TensorOf<float> tq(q, {shape.seq, shape.q_heads, shape.head_dim});
    TensorOf<float> tk(k, {shape.kv_seq, shape.kv_heads, shape.head_dim});
    TensorOf<float> tv(v, {shape.kv_seq, shape.kv_heads, shape.head_dim});
    TensorOf<std::int64_t> tqp(q_pos, {shape.seq});
    TensorOf<std::int64_t> tkp(k_pos, {shape.kv_seq});
    TensorOf<float> to(o, {shape.seq, shape.q_heads, shape.head_dim});
    TensorOf<float> tl(lse, {shape.seq, shape.q_heads});
    ASSERT_EQ(dt_cp_attention(tq.get(), tk.get(), tv.get(), tqp.get(), tkp.get(), causal, scale, to.get(), tl.get()),
              DT_OK)
        << dt_error_last();
  }
};

TEST(BlockAttention, MatchesDoubleReferenceWithHeadsGroupsAndMasks) {
  for (int causal : {0, 1}) {
    for (auto heads : {std::pair{2, 2}, std::pair{4, 2}, std::pair{6, 1}}) {
      for (double scale : {0.0, 0.3}) {
        AttentionCase c{5, 7, heads.first, heads.second, 8, causal == 1, scale == 0.0 ? 1.0 / std::sqrt(8.0) : scale};
        Block block(c, 11);
        Floats o(block.q.size()), lse(static_cast<std::size_t>(c.seq * c.q_heads));
        block.attend(causal, scale, o, lse);
        const auto want = reference_attention(c, block.q, block.k, block.v, block.q_pos, block.k_pos, {});
        const std::string what = "causal " + std::to_string(causal) + ", heads " + std::to_string(heads.first) + "/" +
                                 std::to_string(heads.second) + ", scale " + std::to_string(scale);
        expect_close(o, want.o, kTolerance, "o, " + what);
        expect_close(lse, want.lse, kTolerance, "lse, " + what);
      }
    }
  }
}

// Positions in no particular order: the kernel takes them in increasing runs
// and skips pairs of runs that the mask hides entirely.
TEST(BlockAttention, PositionsInAnyOrderAreMaskedOneByOne) {
  const AttentionCase c{6, 7, 4, 2, 8, true, 0.3};
  Block block(c, 5);
  block.q_pos = {7, 8, 0, 1, 20, 3};
  block.k_pos = {5, 6, 0, 9, 1, 2, 30};
  Floats o(block.q.size()), lse(static_cast<std::size_t>(c.seq * c.q_heads));
  block.attend(1, 0.3, o, lse);
  const auto want = reference_attention(c, block.q, block.k, block.v, block.q_pos, block.k_pos, {});
  expect_close(o, want.o, kTolerance, "o");
  expect_close(lse, want.lse, kTolerance, "lse");
}

TEST(BlockAttention, QueryThatSeesNoKeyGetsZeroAndMinusInfinity) {
  Block block({2, 3, 1, 1, 4, true, 0.5}, 3);
  block.q_pos = {0, 100};
  block.k_pos = {5, 6, 7};
  Floats o(block.q.size(), 9.0F), lse(2, 9.0F);
  block.attend(1, 0.5, o, lse);
  for (int x = 0; x < 4; ++x) EXPECT_EQ(o[x], 0.0F);
  EXPECT_EQ(lse[0], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isfinite(lse[1]));
}

TEST(BlockAttention, MergingTwoKeyBlocksGivesAttentionOverBoth) {
  for (int causal : {0, 1}) {
    const AttentionCase whole{4, 10, 4, 2, 8, causal == 1, 0.25};
    Block all(whole, 21);
    // The first 6 keys and the last 4, as two blocks.
    AttentionCase first_case = whole, second_case = whole;
    first_case.kv_seq = 6;
    second_case.kv_seq = 4;
    Block first(first_case, 21), second(second_case, 21);
    first.q = second.q = all.q;
    first.k.assign(all.k.begin(), all.k.begin() + 6 * 2 * 8);
    first.v.assign(all.v.begin(), all.v.begin() + 6 * 2 * 8);
    second.k.assign(all.k.begin() + 6 * 2 * 8, all.k.end());
    second.v.assign(all.v.begin() + 6 * 2 * 8, all.v.end());
    first.q_pos = second.q_pos = all.q_pos;
    first.k_pos.assign(all.k_pos.begin(), all.k_pos.begin() + 6);
    second.k_pos.assign(all.k_pos.begin() + 6, all.k_pos.end());

    Floats o(all.q.size()), lse(16), o2(all.q.size()), lse2(16);
    first.attend(causal, 0.25, o, lse);
    second.attend(causal, 0.25, o2, lse2);
    TensorOf<float> to(o, {4, 4, 8}), tl(lse, {4, 4}), to2(o2, {4, 4, 8}), tl2(lse2, {4, 4});
    ASSERT_EQ(dt_cp_attention_merge(to.get(), tl.get(), to2.get(), tl2.get()), DT_OK) << dt_error_last();
    const auto want = reference_attention(whole, all.q, all.k, all.v, all.q_pos, all.k_pos, {});
    expect_close(o, want.o, kTolerance, "merged o");
    expect_close(lse, want.lse, kTolerance, "merged lse");
  }
}

// float16 and bfloat16 tensors: computed in float32 from the widened
// inputs and rounded once, so within half a unit in the last place of the
// result (and float32's own error) of the reference over the same values.
TEST(BlockAttention, HalfPrecisionIsFloat32RoundedOnce) {
  using dtrain::testing::from_16_bits;
  using dtrain::testing::half_ulp;
  using dtrain::testing::on_16_bit_grid;
  using dtrain::testing::to_16_bits;
  using Halves = std::vector<std::uint16_t>;
  for (DLDataType dtype : {dtrain::testing::kFloat16, dtrain::testing::kBfloat16}) {
    const std::string what = dtype.code == kDLBfloat ? "bfloat16" : "float16";
    AttentionCase c{6, 9, 4, 2, 8, true, 0.25};
    Block block(c, 17);
    block.q = on_16_bit_grid(block.q);
    block.k = on_16_bit_grid(block.k);
    block.v = on_16_bit_grid(block.v);
    Halves q = to_16_bits(dtype, block.q), k = to_16_bits(dtype, block.k), v = to_16_bits(dtype, block.v);
    Halves o(q.size(), 0xffff), o_other(q.size());
    Floats lse(static_cast<std::size_t>(c.seq * c.q_heads)), lse_other(lse.size());
    {
      TensorOf<std::uint16_t> tq(q, {c.seq, c.q_heads, c.head_dim}, dtype), tk(k, {c.kv_seq, c.kv_heads, c.head_dim}, dtype),
          tv(v, {c.kv_seq, c.kv_heads, c.head_dim}, dtype), to(o, {c.seq, c.q_heads, c.head_dim}, dtype);
      TensorOf<std::int64_t> tqp(block.q_pos, {c.seq}), tkp(block.k_pos, {c.kv_seq});
      TensorOf<float> tl(lse, {c.seq, c.q_heads});
      ASSERT_EQ(dt_cp_attention(tq.get(), tk.get(), tv.get(), tqp.get(), tkp.get(), 1, 0.25, to.get(), tl.get()),
                DT_OK)
          << dt_error_last();
    }
    const auto want = reference_attention(c, block.q, block.k, block.v, block.q_pos, block.k_pos, {});
    expect_close(from_16_bits(dtype, o), want.o, kTolerance + half_ulp(dtype), "o, " + what);
    expect_close(lse, want.lse, kTolerance, "lse, " + what);

    // Merging a result with one of no keys at all leaves it as it was.
    Floats empty(lse.size(), -std::numeric_limits<float>::infinity());
    const Halves before = o;
    {
      TensorOf<std::uint16_t> to(o, {c.seq, c.q_heads, c.head_dim}, dtype),
          tother(o_other, {c.seq, c.q_heads, c.head_dim}, dtype);
      TensorOf<float> tl(lse, {c.seq, c.q_heads}), tempty(empty, {c.seq, c.q_heads});
      ASSERT_EQ(dt_cp_attention_merge(to.get(), tl.get(), tother.get(), tempty.get()), DT_OK) << dt_error_last();
    }
    EXPECT_EQ(o, before) << what;

    // A dtype the others do not share is refused.
    Floats o32(q.size());
    TensorOf<std::uint16_t> tq(q, {c.seq, c.q_heads, c.head_dim}, dtype), tk(k, {c.kv_seq, c.kv_heads, c.head_dim}, dtype),
        tv(v, {c.kv_seq, c.kv_heads, c.head_dim}, dtype);
    TensorOf<std::int64_t> tqp(block.q_pos, {c.seq}), tkp(block.k_pos, {c.kv_seq});
    TensorOf<float> to32(o32, {c.seq, c.q_heads, c.head_dim}), tl(lse, {c.seq, c.q_heads});
    EXPECT_EQ(dt_cp_attention(tq.get(), tk.get(), tv.get(), tqp.get(), tkp.get(), 1, 0.25, to32.get(), tl.get()),
              DT_ERR_INVALID_ARGUMENT);
  }
}

TEST(BlockAttention, MergingTwoEmptyResultsStaysEmpty) {
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  Floats o(2, 5.0F), lse(1, minus_infinity), o2(2, 7.0F), lse2(1, minus_infinity);
  TensorOf<float> to(o, {1, 1, 2}), tl(lse, {1, 1}), to2(o2, {1, 1, 2}), tl2(lse2, {1, 1});
  ASSERT_EQ(dt_cp_attention_merge(to.get(), tl.get(), to2.get(), tl2.get()), DT_OK) << dt_error_last();
  EXPECT_EQ(o, (Floats{0.0F, 0.0F}));
  EXPECT_EQ(lse[0], minus_infinity);
}

#ifndef DTRAIN_TEST_ON_GPU
// Host memory only: the layout helpers take host memory, and the refusals
// build tensors that share one vector's memory (on a GPU each TensorOf is a
// copy of its own).

TEST(Layout, PositionsFollowTheDescription) {
  for (dt_cp_layout layout : {DT_CP_CONTIGUOUS, DT_CP_ZIGZAG}) {
    for (int cp : {1, 2, 3, 4}) {
      const std::int64_t seq = 2 * cp * 3;
      for (int r = 0; r < cp; ++r) {
        Positions got(static_cast<std::size_t>(seq / cp), -1);
        TensorOf<std::int64_t> t(got, {seq / cp});
        ASSERT_EQ(dt_cp_positions(layout, cp, r, t.get()), DT_OK) << dt_error_last();
        EXPECT_EQ(got, layout_positions(layout, cp, r, seq)) << "layout " << layout << " cp " << cp << " rank " << r;
      }
    }
  }
}

TEST(Layout, ShardAndUnshardMoveTheRanksRows) {
  const int cp = 3;
  const std::int64_t seq = 12, row = 2 * 3;
  for (dt_cp_layout layout : {DT_CP_CONTIGUOUS, DT_CP_ZIGZAG}) {
    Floats full(static_cast<std::size_t>(seq * row));
    for (std::size_t e = 0; e < full.size(); ++e) full[e] = static_cast<float>(e);
    Floats rebuilt(full.size(), -1.0F);
    TensorOf<float> tfull(full, {seq, 2, 3}), trebuilt(rebuilt, {seq, 2, 3});
    for (int r = 0; r < cp; ++r) {
      Floats local(static_cast<std::size_t>(seq / cp * row));
      TensorOf<float> tlocal(local, {seq / cp, 2, 3});
      ASSERT_EQ(dt_cp_shard(layout, cp, r, tfull.get(), tlocal.get()), DT_OK) << dt_error_last();
      const Positions at = layout_positions(layout, cp, r, seq);
      for (std::size_t i = 0; i < at.size(); ++i) {
        for (std::int64_t x = 0; x < row; ++x) EXPECT_EQ(local[i * row + x], full[at[i] * row + x]);
      }
      ASSERT_EQ(dt_cp_unshard(layout, cp, r, tlocal.get(), trebuilt.get()), DT_OK) << dt_error_last();
    }
    EXPECT_EQ(rebuilt, full) << "layout " << layout;
  }
}

TEST(Refusals, LayoutsRefuseWhatTheyCannotSplit) {
  Floats full(10), local(5);
  TensorOf<float> tfull(full, {10}), tlocal(local, {5});
  EXPECT_EQ(dt_cp_shard(DT_CP_ZIGZAG, 2, 0, tfull.get(), tlocal.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_cp_shard(DT_CP_CONTIGUOUS, 2, 0, tfull.get(), tlocal.get()), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_cp_shard(DT_CP_CONTIGUOUS, 2, 2, tfull.get(), tlocal.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_cp_shard(DT_CP_CONTIGUOUS, 0, 0, tfull.get(), tlocal.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_cp_shard(static_cast<dt_cp_layout>(7), 2, 0, tfull.get(), tlocal.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_cp_shard(DT_CP_CONTIGUOUS, 5, 0, tfull.get(), tlocal.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_cp_unshard(DT_CP_CONTIGUOUS, 2, 0, nullptr, tfull.get()), DT_ERR_INVALID_ARGUMENT);
  TensorOf<float> inside_full(full, {5});
  EXPECT_EQ(dt_cp_shard(DT_CP_CONTIGUOUS, 2, 1, tfull.get(), inside_full.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("overlaps"), std::string::npos) << dt_error_last();
  Positions odd(3);
  TensorOf<std::int64_t> todd(odd, {3});
  EXPECT_EQ(dt_cp_positions(DT_CP_ZIGZAG, 2, 0, todd.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_cp_positions(DT_CP_CONTIGUOUS, 2, 0, tfull.get()), DT_ERR_INVALID_ARGUMENT);  // float32
}

TEST(Refusals, AttentionRefusesBadTensorsAndChangesNothing) {
  Floats q(2 * 3 * 4, 1.0F), k(2 * 2 * 4, 1.0F), v(k), o(q.size(), 5.0F), lse(8, 5.0F);
  Positions qp{0, 1}, kp{0, 1};
  TensorOf<float> tq(q, {2, 3, 4}), tk(k, {2, 2, 4}), tv(v, {2, 2, 4}), to(o, {2, 3, 4}), tl(lse, {2, 3});
  TensorOf<std::int64_t> tqp(qp, {2}), tkp(kp, {2});
  // Three query heads do not share two key/value heads.
  EXPECT_EQ(dt_cp_attention(tq.get(), tk.get(), tv.get(), tqp.get(), tkp.get(), 0, 0.0, to.get(), tl.get()),
            DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("heads"), std::string::npos) << dt_error_last();
  TensorOf<float> tq2(q, {2, 6, 2}), tk2(k, {2, 2, 4}), to2(o, {2, 6, 2}), tl2(lse, {2, 6});
  EXPECT_EQ(dt_cp_attention(tq2.get(), tk2.get(), tk2.get(), nullptr, nullptr, 0, 0.0, to2.get(), tl2.get()),
            DT_ERR_INVALID_ARGUMENT);  // head dimensions 2 and 4
  TensorOf<float> tqm(q, {2, 4, 3}), tkm(k, {2, 2, 3}), tvm(v, {2, 2, 3}), tom(o, {2, 4, 3}), tlm(lse, {2, 4});
  auto call = [&](const DLTensor* qq, const DLTensor* qpos, int causal, double scale, DLTensor* oo, DLTensor* ll) {
    return dt_cp_attention(qq, tkm.get(), tvm.get(), qpos, tkp.get(), causal, scale, oo, ll);
  };
  EXPECT_EQ(call(tqm.get(), tqp.get(), 1, 0.0, tom.get(), tlm.get()), DT_OK) << dt_error_last();
  std::fill(o.begin(), o.end(), 5.0F);
  std::fill(lse.begin(), lse.end(), 5.0F);
  EXPECT_EQ(call(nullptr, tqp.get(), 0, 0.0, tom.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(tqm.get(), nullptr, 1, 0.0, tom.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);  // causal, no positions
  EXPECT_EQ(call(tqm.get(), tqp.get(), 2, 0.0, tom.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(tqm.get(), tqp.get(), 0, -1.0, tom.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(tqm.get(), tqp.get(), 0, std::nan(""), tom.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(tqm.get(), tqp.get(), 0, 0.0, tlm.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);  // o of rank 2
  TensorOf<float> overlapping_lse(o, {2, 4});
  EXPECT_EQ(call(tqm.get(), tqp.get(), 0, 0.0, tom.get(), overlapping_lse.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("overlaps"), std::string::npos) << dt_error_last();
  std::vector<double> wide(q.size());
  DLTensor q_f64 = *tqm.get();
  q_f64.data = wide.data();
  q_f64.dtype = {kDLFloat, 64, 1};
  EXPECT_EQ(call(&q_f64, tqp.get(), 0, 0.0, tom.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(o, Floats(o.size(), 5.0F));
  EXPECT_EQ(lse, Floats(lse.size(), 5.0F));

  TensorOf<float> wrong_lse(lse, {4, 2});
  EXPECT_EQ(dt_cp_attention_merge(tom.get(), wrong_lse.get(), tom.get(), tlm.get()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_cp_attention_merge(tom.get(), tlm.get(), nullptr, tlm.get()), DT_ERR_INVALID_ARGUMENT);
}

// With a device, host memory labelled kDLCUDA would be handed to it.
TEST(Refusals, CudaTensorsWithoutADeviceAreUnsupported) {
  if (dtrain::testing::cuda_device_present()) {
    GTEST_SKIP() << "this machine has a CUDA device (" << dt_build_info() << ")";
  }
  Block block({2, 2, 1, 1, 4, false, 0.5}, 3);
  Floats o(block.q.size(), 5.0F), lse(2, 5.0F);
  TensorOf<float> tq(block.q, {2, 1, 4}), tk(block.k, {2, 1, 4}), tv(block.v, {2, 1, 4}), to(o, {2, 1, 4}),
      tl(lse, {2, 1});
  DLTensor q_cuda = *tq.get();
  q_cuda.device = {kDLCUDA, 0};
  EXPECT_EQ(dt_cp_attention(&q_cuda, tk.get(), tv.get(), nullptr, nullptr, 0, 0.0, to.get(), tl.get()),
            DT_ERR_UNSUPPORTED);
  EXPECT_EQ(o, Floats(o.size(), 5.0F));
}

#endif  // DTRAIN_TEST_ON_GPU

}  // namespace
