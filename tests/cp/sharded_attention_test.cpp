// Ring and all-to-all (Ulysses) attention through the C API, one process
// per rank: every rank holds its shard of one sequence (contiguous or
// zigzag), and its outputs and gradients must be the rows of attention over
// the whole sequence that the test computes in double on its own
// (reference_attention.hpp). Then the refusals, which must reach every rank
// instead of hanging.
//
// CTest runs this alone (a world of one) and under dtrun with 2, 3 and 4 ranks.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda_device.hpp"
#include "common/world_fixture.hpp"
#include "cp/reference_attention.hpp"
#include "cp/require_device.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::AttentionCase;
using dtrain::testing::expect_close;
using dtrain::testing::layout_positions;
using dtrain::testing::random_values;
using dtrain::testing::reference_attention;
using dtrain::testing::rows_at;
using dtrain::testing::TensorOf;
using Floats = std::vector<float>;

constexpr double kTolerance = 1e-5;
constexpr std::int64_t kHeadDim = 8;
constexpr std::int64_t kRowsPerChunk = 3;

// The calls of one way of attending over a sharded sequence.
struct Strategy {
  const char* name;
  decltype(&dt_cp_ring_attention_forward) forward;
  decltype(&dt_cp_ring_attention_backward) backward;
};
const Strategy kRing{"ring", dt_cp_ring_attention_forward, dt_cp_ring_attention_backward};
const Strategy kUlysses{"all-to-all", dt_cp_ulysses_attention_forward, dt_cp_ulysses_attention_backward};

// One rank's tensors for one call, shaped from the local length.
struct Shard {
  std::int64_t rows, q_heads, kv_heads;
  Floats q, k, v, d_o, o, lse, dq, dk, dv;

  Strategy strategy = kRing;

  Shard(std::int64_t rows_, std::int64_t q_heads_, std::int64_t kv_heads_)
      : rows(rows_), q_heads(q_heads_), kv_heads(kv_heads_), q(size_q(), 0.5F), k(size_kv(), 0.25F),
        v(size_kv(), 0.75F), d_o(size_q(), 1.0F), o(size_q()), lse(static_cast<std::size_t>(rows * q_heads)),
        dq(size_q()), dk(size_kv()), dv(size_kv()) {}
  std::size_t size_q() const { return static_cast<std::size_t>(rows * q_heads * kHeadDim); }
  std::size_t size_kv() const { return static_cast<std::size_t>(rows * kv_heads * kHeadDim); }

  dt_status forward(dt_comm* comm, dt_cp_layout layout, int causal, double scale) {
    TensorOf<float> tq(q, {rows, q_heads, kHeadDim}), tk(k, {rows, kv_heads, kHeadDim}),
        tv(v, {rows, kv_heads, kHeadDim}), to(o, {rows, q_heads, kHeadDim}), tl(lse, {rows, q_heads});
    return strategy.forward(comm, layout, causal, scale, tq.get(), tk.get(), tv.get(), to.get(), tl.get());
  }

  dt_status backward(dt_comm* comm, dt_cp_layout layout, int causal, double scale) {
    TensorOf<float> tq(q, {rows, q_heads, kHeadDim}), tk(k, {rows, kv_heads, kHeadDim}),
        tv(v, {rows, kv_heads, kHeadDim}), to(o, {rows, q_heads, kHeadDim}), tl(lse, {rows, q_heads}),
        tdo(d_o, {rows, q_heads, kHeadDim}), tdq(dq, {rows, q_heads, kHeadDim}), tdk(dk, {rows, kv_heads, kHeadDim}),
        tdv(dv, {rows, kv_heads, kHeadDim});
    return strategy.backward(comm, layout, causal, scale, tq.get(), tk.get(), tv.get(), to.get(), tl.get(), tdo.get(),
                             tdq.get(), tdk.get(), tdv.get());
  }
};

class ShardedAttention : public dtrain::testing::WorldFixture {
 protected:
  void expect_full_attention(const Strategy& strategy, dt_cp_layout layout, bool causal, std::int64_t q_heads,
                             std::int64_t kv_heads, std::int64_t rows_per_chunk = kRowsPerChunk) {
    const std::int64_t seq = 2 * size_ * rows_per_chunk;
    const AttentionCase whole{seq, seq, q_heads, kv_heads, kHeadDim, causal, 0.3};
    const Floats q = random_values(static_cast<std::size_t>(seq * q_heads * kHeadDim), 1);
    const Floats k = random_values(static_cast<std::size_t>(seq * kv_heads * kHeadDim), 2);
    const Floats v = random_values(k.size(), 3);
    const Floats d_o = random_values(q.size(), 4);
    std::vector<std::int64_t> everywhere(static_cast<std::size_t>(seq));
    for (std::int64_t t = 0; t < seq; ++t) everywhere[static_cast<std::size_t>(t)] = t;
    const auto want = reference_attention(whole, q, k, v, everywhere, everywhere, d_o);

    const auto mine = layout_positions(layout, size_, rank_, seq);
    const std::int64_t q_row = q_heads * kHeadDim, kv_row = kv_heads * kHeadDim;
    Shard shard(seq / size_, q_heads, kv_heads);
    shard.strategy = strategy;
    shard.q = rows_at(q, mine, q_row);
    shard.k = rows_at(k, mine, kv_row);
    shard.v = rows_at(v, mine, kv_row);
    shard.d_o = rows_at(d_o, mine, q_row);
    const std::string what = std::string(strategy.name) + ", " + (layout == DT_CP_ZIGZAG ? "zigzag" : "contiguous") +
                             (causal ? ", causal" : "") + ", heads " + std::to_string(q_heads) + "/" +
                             std::to_string(kv_heads) + ", rank " + std::to_string(rank_);
    ASSERT_EQ(shard.forward(comm_, layout, causal, 0.3), DT_OK) << dt_error_last();
    expect_close(shard.o, rows_at(want.o, mine, q_row), kTolerance, "o, " + what);
    expect_close(shard.lse, rows_at(want.lse, mine, q_heads), kTolerance, "lse, " + what);
    ASSERT_EQ(shard.backward(comm_, layout, causal, 0.3), DT_OK) << dt_error_last();
    expect_close(shard.dq, rows_at(want.dq, mine, q_row), kTolerance, "dq, " + what);
    expect_close(shard.dk, rows_at(want.dk, mine, kv_row), kTolerance, "dk, " + what);
    expect_close(shard.dv, rows_at(want.dv, mine, kv_row), kTolerance, "dv, " + what);
  }

  // Forward and backward with every data tensor in a 16-bit `dtype`, on
  // values it holds exactly: the outputs within half a unit in its last
  // place of attention in double; the gradients, which also start from the
  // forward's rounded o, within `gradient_ulps` half units (cp.h says one
  // unit).
  void expect_half_precision(const Strategy& strategy, dt_cp_layout layout, DLDataType dtype, double gradient_ulps) {
    using dtrain::testing::from_16_bits;
    using dtrain::testing::half_ulp;
    using dtrain::testing::on_16_bit_grid;
    using dtrain::testing::to_16_bits;
    using Halves = std::vector<std::uint16_t>;
    const std::int64_t seq = 2 * size_ * kRowsPerChunk, heads = 2 * size_, kv_heads = size_;
    const AttentionCase whole{seq, seq, heads, kv_heads, kHeadDim, true, 0.3};
    const Floats q = on_16_bit_grid(random_values(static_cast<std::size_t>(seq * heads * kHeadDim), 5));
    const Floats k = on_16_bit_grid(random_values(static_cast<std::size_t>(seq * kv_heads * kHeadDim), 6));
    const Floats v = on_16_bit_grid(random_values(k.size(), 7));
    const Floats d_o = on_16_bit_grid(random_values(q.size(), 8));
    std::vector<std::int64_t> everywhere(static_cast<std::size_t>(seq));
    for (std::int64_t t = 0; t < seq; ++t) everywhere[static_cast<std::size_t>(t)] = t;
    const auto want = reference_attention(whole, q, k, v, everywhere, everywhere, d_o);
    const auto mine = layout_positions(layout, size_, rank_, seq);
    const std::int64_t rows = seq / size_, q_row = heads * kHeadDim, kv_row = kv_heads * kHeadDim;
    Halves hq = to_16_bits(dtype, rows_at(q, mine, q_row)), hk = to_16_bits(dtype, rows_at(k, mine, kv_row)),
           hv = to_16_bits(dtype, rows_at(v, mine, kv_row)), hd_o = to_16_bits(dtype, rows_at(d_o, mine, q_row));
    Halves ho(hq.size()), hdq(hq.size()), hdk(hk.size()), hdv(hk.size());
    Floats lse(static_cast<std::size_t>(rows * heads));
    const std::vector<std::int64_t> q_dims{rows, heads, kHeadDim}, kv_dims{rows, kv_heads, kHeadDim};
    {
      TensorOf<std::uint16_t> tq(hq, q_dims, dtype), tk(hk, kv_dims, dtype), tv(hv, kv_dims, dtype),
          to(ho, q_dims, dtype), tdo(hd_o, q_dims, dtype), tdq(hdq, q_dims, dtype), tdk(hdk, kv_dims, dtype),
          tdv(hdv, kv_dims, dtype);
      TensorOf<float> tl(lse, {rows, heads});
      ASSERT_EQ(strategy.forward(comm_, layout, 1, 0.3, tq.get(), tk.get(), tv.get(), to.get(), tl.get()), DT_OK)
          << dt_error_last();
      ASSERT_EQ(strategy.backward(comm_, layout, 1, 0.3, tq.get(), tk.get(), tv.get(), to.get(), tl.get(), tdo.get(),
                                  tdq.get(), tdk.get(), tdv.get()),
                DT_OK)
          << dt_error_last();
    }
    const std::string what = std::string(strategy.name) + (dtype.code == kDLBfloat ? ", bfloat16" : ", float16");
    const double output = kTolerance + half_ulp(dtype), gradient = kTolerance + gradient_ulps * half_ulp(dtype);
    expect_close(from_16_bits(dtype, ho), rows_at(want.o, mine, q_row), output, "o, " + what);
    expect_close(lse, rows_at(want.lse, mine, heads), kTolerance, "lse, " + what);
    expect_close(from_16_bits(dtype, hdq), rows_at(want.dq, mine, q_row), gradient, "dq, " + what);
    expect_close(from_16_bits(dtype, hdk), rows_at(want.dk, mine, kv_row), gradient, "dk, " + what);
    expect_close(from_16_bits(dtype, hdv), rows_at(want.dv, mine, kv_row), gradient, "dv, " + what);
  }

  // Every rank but `odd_one` gets `others`; `odd_one` gets `its_own`.
  void expect_statuses(dt_status got, int odd_one, dt_status its_own, dt_status others) {
    EXPECT_EQ(got, rank_ == odd_one ? its_own : others) << dt_error_last();
  }
};

// Head counts the all-to-all can split: as many as ranks, and grouped
// queries with twice as many.
TEST_F(ShardedAttention, ForwardAndBackwardMatchAttentionOverTheWholeSequence) {
  for (const Strategy& strategy : {kRing, kUlysses}) {
    for (dt_cp_layout layout : {DT_CP_CONTIGUOUS, DT_CP_ZIGZAG}) {
      for (bool causal : {false, true}) {
        expect_full_attention(strategy, layout, causal, size_, size_);
        expect_full_attention(strategy, layout, causal, 2 * size_, size_);
      }
    }
  }
}

// Chunks longer than the kernel's causal tiles (128 queries), and not a
// multiple of them: the diagonal blocks are cut into tiles that each see a
// different prefix of the keys.
TEST_F(ShardedAttention, LongCausalChunksMatchAttentionOverTheWholeSequence) {
  for (dt_cp_layout layout : {DT_CP_CONTIGUOUS, DT_CP_ZIGZAG}) {
    expect_full_attention(kRing, layout, true, size_, size_, 150);
  }
}

TEST_F(ShardedAttention, HalfPrecisionMatchesAttentionOverTheWholeSequence) {
  for (const Strategy& strategy : {kRing, kUlysses}) {
    for (DLDataType dtype : {dtrain::testing::kFloat16, dtrain::testing::kBfloat16}) {
      expect_half_precision(strategy, DT_CP_ZIGZAG, dtype, 2.0);
    }
  }
}

TEST_F(ShardedAttention, AllToAllRefusesHeadsItCannotSplit) {
  if (size_ < 2) GTEST_SKIP() << "one rank splits any number of heads";
  Shard shard(4, size_ + 1, size_ + 1);
  shard.strategy = kUlysses;
  EXPECT_EQ(shard.forward(comm_, DT_CP_CONTIGUOUS, 0, 0.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("splits the heads"), std::string::npos) << dt_error_last();
  EXPECT_EQ(shard.backward(comm_, DT_CP_CONTIGUOUS, 0, 0.0), DT_ERR_INVALID_ARGUMENT);
  Shard divisible(4, size_, size_);
  divisible.strategy = kUlysses;
  EXPECT_EQ(divisible.forward(comm_, rank_ == 0 ? DT_CP_ZIGZAG : DT_CP_CONTIGUOUS, 0, 0.0), DT_ERR_MISMATCH);
  EXPECT_EQ(divisible.forward(comm_, DT_CP_ZIGZAG, 1, 0.0), DT_OK) << dt_error_last();
}

TEST_F(ShardedAttention, ZigzagRefusesAnOddShardOnEveryRank) {
  Shard shard(3, 2, 2);
  EXPECT_EQ(shard.forward(comm_, DT_CP_ZIGZAG, 1, 0.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("2 * cp"), std::string::npos) << dt_error_last();
  EXPECT_EQ(shard.backward(comm_, DT_CP_ZIGZAG, 1, 0.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(shard.forward(comm_, static_cast<dt_cp_layout>(7), 1, 0.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(shard.forward(comm_, DT_CP_CONTIGUOUS, 1, 0.0), DT_OK) << dt_error_last();
}

TEST_F(ShardedAttention, NullCommIsRefused) {
  Shard shard(2, 2, 2);
  EXPECT_EQ(shard.forward(nullptr, DT_CP_CONTIGUOUS, 0, 0.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(shard.backward(nullptr, DT_CP_CONTIGUOUS, 0, 0.0), DT_ERR_INVALID_ARGUMENT);
}

#ifndef DTRAIN_TEST_ON_GPU
// With a device, host memory labelled kDLCUDA would be handed to it.
TEST_F(ShardedAttention, CudaTensorsWithoutADeviceAreUnsupported) {
  if (dtrain::testing::cuda_device_present()) {
    GTEST_SKIP() << "this machine has a CUDA device (" << dt_build_info() << ")";
  }
  Shard shard(2, 2, 2);
  TensorOf<float> tq(shard.q, {2, 2, kHeadDim}), to(shard.o, {2, 2, kHeadDim}), tl(shard.lse, {2, 2});
  DLTensor q_cuda = *tq.get();
  q_cuda.device = {kDLCUDA, 0};
  // Every rank passes CUDA memory, so every rank refuses its own arguments.
  EXPECT_EQ(dt_cp_ring_attention_forward(comm_, DT_CP_CONTIGUOUS, 0, 0.0, &q_cuda, tq.get(), tq.get(), to.get(),
                                         tl.get()),
            DT_ERR_UNSUPPORTED);
}
#endif

TEST_F(ShardedAttention, RanksThatDisagreeAreAllRefusedAndTheRingStillWorks) {
  if (size_ < 2) GTEST_SKIP() << "disagreement needs two ranks";
  const int last = size_ - 1;
  Shard shard(4, 2, 2);
  // A different scale on the last rank: every rank is refused.
  EXPECT_EQ(shard.forward(comm_, DT_CP_CONTIGUOUS, 1, rank_ == last ? 0.5 : 0.0), DT_ERR_MISMATCH);
  EXPECT_NE(std::string(dt_error_last()).find("rank " + std::to_string(last)), std::string::npos) << dt_error_last();
  // A different layout.
  EXPECT_EQ(shard.forward(comm_, rank_ == 0 ? DT_CP_ZIGZAG : DT_CP_CONTIGUOUS, 1, 0.0), DT_ERR_MISMATCH);
  // A rank refusing its own causal flag; the others hear of it.
  expect_statuses(shard.forward(comm_, DT_CP_CONTIGUOUS, rank_ == last ? 2 : 1, 0.0), last,
                  DT_ERR_INVALID_ARGUMENT, DT_ERR_MISMATCH);
  // A different local length.
  Shard longer(rank_ == last ? 6 : 4, 2, 2);
  EXPECT_EQ(longer.forward(comm_, DT_CP_CONTIGUOUS, 0, 0.0), DT_ERR_MISMATCH);
  // Backward: a gradient of the wrong shape on rank 0.
  Shard wrong(4, 2, 2);
  if (rank_ == 0) wrong.dk.resize(wrong.dk.size() / 2);
  TensorOf<float> tq(wrong.q, {4, 2, kHeadDim}), tk(wrong.k, {4, 2, kHeadDim}), to(wrong.o, {4, 2, kHeadDim}),
      tl(wrong.lse, {4, 2}), tdq(wrong.dq, {4, 2, kHeadDim}), tdk(wrong.dk, {rank_ == 0 ? 2 : 4, 2, kHeadDim}),
      tdv(wrong.dv, {4, 2, kHeadDim});
  expect_statuses(dt_cp_ring_attention_backward(comm_, DT_CP_CONTIGUOUS, 0, 0.0, tq.get(), tk.get(), tk.get(), to.get(),
                                                tl.get(), to.get(), tdq.get(), tdk.get(), tdv.get()),
                  0, DT_ERR_INVALID_ARGUMENT, DT_ERR_MISMATCH);
  // After all that, the same communicator still runs a ring.
  EXPECT_EQ(shard.forward(comm_, DT_CP_ZIGZAG, 1, 0.0), DT_OK) << dt_error_last();
  EXPECT_EQ(shard.backward(comm_, DT_CP_ZIGZAG, 1, 0.0), DT_OK) << dt_error_last();
}

}  // namespace
