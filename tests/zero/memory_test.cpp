// dt_zero_memory against ZeRO's formulas. For Ψ parameters of 2-byte
// dtype on N ranks with AdamW (12 bytes of f32 master weights and moments
// per element updated): stage 0 holds 16Ψ, stage 1 4Ψ + 12Ψ/N, stage 2
// 2Ψ + 14Ψ/N, stage 3 16Ψ/N, each plus the padding that makes units divide
// by N. Outside a micro-step stages 0-2 hold no communication buffers; in
// stage 3 a gathered unit adds its full parameters until released, and a
// unit's gradient buffer counts as communication until its reduction ends.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "model.hpp"
#include "parallel/zero/zero.hpp"
#include "ucx/harness.hpp"
#include "common/parsed_tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::zero::MemoryUsage;
using parallel::zero::Zero;

parallel::zero::Options options_of(int stage) {
  parallel::zero::Options options;
  options.stage = stage;
  options.bucket_bytes = std::int64_t{1} << 40;  // stages 0-2: one unit; stage 3: one per parameter
  return options;
}

optim::Config adamw() { return {}; }

// What rank `rank` of `ranks` should hold, worked out element by element
// from the definition: units padded to a multiple of N, rank r owning the
// r-th of N equal shards.
MemoryUsage expected(int stage, const std::vector<std::int64_t>& counts, DType dtype, int ranks, int rank) {
  const std::int64_t e = static_cast<std::int64_t>(dtype_size(dtype));
  const std::int64_t master = dtype == DType::f32 ? 0 : 4;
  const std::int64_t state = 8;
  std::vector<std::int64_t> units = counts;
  if (stage < 3) units = {std::accumulate(counts.begin(), counts.end(), std::int64_t{0})};
  const std::int64_t n = stage == 0 ? 1 : ranks;
  const std::int64_t r = stage == 0 ? 0 : rank;
  MemoryUsage m;
  for (std::int64_t count : units) {
    const std::int64_t padded = (count + n - 1) / n * n;
    const std::int64_t shard = padded / n;
    const std::int64_t owned = std::clamp<std::int64_t>(count - r * shard, 0, shard);
    const std::int64_t own_padding = shard - owned;
    m.master_weights += master * shard;
    m.optimizer_state += state * shard;
    m.padding += (master + state) * own_padding;
    if (stage < 3) {
      m.parameters += e * padded;
      m.padding += e * (padded - count);
    } else {
      m.parameters += e * shard;
      m.padding += e * own_padding;
    }
    if (stage < 2) {
      m.gradients += e * padded;
      m.padding += e * (padded - count);
    } else {
      m.gradients += e * shard;
      m.padding += e * own_padding;
    }
  }
  return m;
}

void expect_usage(const MemoryUsage& got, const MemoryUsage& want, const char* when) {
  EXPECT_EQ(got.parameters, want.parameters) << when;
  EXPECT_EQ(got.gradients, want.gradients) << when;
  EXPECT_EQ(got.optimizer_state, want.optimizer_state) << when;
  EXPECT_EQ(got.master_weights, want.master_weights) << when;
  EXPECT_EQ(got.communication, want.communication) << when;
  EXPECT_EQ(got.padding, want.padding) << when;
  EXPECT_GE(got.peak, got.total()) << when;
}

class Formulas : public ::testing::TestWithParam<std::tuple<int, int, DType>> {};

// Ψ = 1200 in units that divide by 1-4: the totals are the formulas exactly.
TEST_P(Formulas, DivisibleModelMatchesTheFormulas) {
  const auto [ranks, stage, dtype] = GetParam();
  const std::vector<std::int64_t> counts{360, 480, 360};  // each divides by 1-4 (stage 3 units)
  const std::int64_t psi = 1200;
  run_world(ranks, [&](comm::Communicator& comm) {
    FlatParameters params(counts, dtype);
    Zero zero(comm, testing::parsed(params.pointers(), "params"), adamw(), options_of(stage));
    const MemoryUsage got = zero.memory_usage();
    const std::int64_t n = ranks;
    if (dtype == DType::bf16) {
      const std::int64_t formula[] = {16 * psi, 4 * psi + 12 * psi / n, 2 * psi + 14 * psi / n, 16 * psi / n};
      EXPECT_EQ(got.total(), formula[stage]);
    } else {
      const std::int64_t formula[] = {16 * psi, 8 * psi + 8 * psi / n, 4 * psi + 12 * psi / n, 16 * psi / n};
      EXPECT_EQ(got.total(), formula[stage]);
    }
    EXPECT_EQ(got.padding, 0);
    expect_usage(got, expected(stage, counts, dtype, ranks, comm.rank()), "after creation");
  });
}

// Ψ = 1001 in units of 500, 300 and 201: padding appears, on the ranks whose
// shards hold it.
TEST_P(Formulas, PaddingIsCountedWhereItIsHeld) {
  const auto [ranks, stage, dtype] = GetParam();
  const std::vector<std::int64_t> counts{500, 300, 201};
  run_world(ranks, [&](comm::Communicator& comm) {
    FlatParameters params(counts, dtype);
    Zero zero(comm, testing::parsed(params.pointers(), "params"), adamw(), options_of(stage));
    expect_usage(zero.memory_usage(), expected(stage, counts, dtype, ranks, comm.rank()), "after creation");
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, Formulas,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::Values(0, 1, 2, 3),
                                            ::testing::Values(DType::bf16, DType::f32)),
                         [](const auto& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "_ranks_stage_" +
                                  std::to_string(std::get<1>(param_info.param)) + "_" +
                                  dtype_name(std::get<2>(param_info.param));
                         });

class DuringAStep : public ::testing::TestWithParam<int> {};

// Stage 3 holds the shards plus the units gathered now; a unit's gradient
// buffer lives from its first handout to the end of its reduction.
TEST_P(DuringAStep, Stage3HoldsShardsPlusTheGatheredUnit) {
  const int ranks = GetParam();
  const std::vector<std::int64_t> counts{500, 300, 201};
  run_world(ranks, [&](comm::Communicator& comm) {
    FlatParameters params(counts, DType::bf16);
    parallel::zero::Options options = options_of(3);
    options.prefetch = false;
    Zero zero(comm, testing::parsed(params.pointers(), "params"), adamw(), options);
    const MemoryUsage shards = expected(3, counts, DType::bf16, ranks, comm.rank());
    const std::int64_t padded0 = (500 + ranks - 1) / ranks * ranks;

    zero.gather(0);
    zero.gather_wait(0, -1);
    MemoryUsage with_unit = shards;
    with_unit.parameters += 2 * padded0;
    with_unit.padding += 2 * (padded0 - 500);
    expect_usage(zero.memory_usage(), with_unit, "unit 0 gathered");
    zero.release(0);
    expect_usage(zero.memory_usage(), shards, "unit 0 released");

    zero.gradient(0);
    MemoryUsage with_gradient = shards;
    with_gradient.communication = 2 * padded0;
    with_gradient.padding += 2 * (padded0 - 500);
    expect_usage(zero.memory_usage(), with_gradient, "unit 0's gradient handed out");
    for (std::size_t i = 0; i < counts.size(); ++i) zero.mark_ready(i);
    zero.wait(-1);
    expect_usage(zero.memory_usage(), shards, "after the micro-step");
    EXPECT_GE(zero.memory_usage().peak, with_unit.total());
    zero.step();
    expect_usage(zero.memory_usage(), shards, "after the step");
  });
}

// Stages 0-2 hold no communication buffers outside a micro-step; stage 2's
// unit gradient buffer exists only within one.
TEST_P(DuringAStep, Stages0To2HoldNoCommunicationOutsideAMicroStep) {
  const int ranks = GetParam();
  const std::vector<std::int64_t> counts{500, 300, 201};
  run_world(ranks, [&](comm::Communicator& comm) {
    for (int stage = 0; stage < 3; ++stage) {
      FlatParameters params(counts, DType::bf16);
      Zero zero(comm, testing::parsed(params.pointers(), "params"), adamw(), options_of(stage));
      const MemoryUsage held = expected(stage, counts, DType::bf16, ranks, comm.rank());
      zero.gradient(1);
      if (stage == 2) {
        EXPECT_EQ(zero.memory_usage().communication, 2 * ((1001 + ranks - 1) / ranks * ranks));
      } else {
        EXPECT_EQ(zero.memory_usage().communication, 0);
      }
      for (std::size_t i = 0; i < counts.size(); ++i) zero.mark_ready(i);
      zero.wait(-1);
      expect_usage(zero.memory_usage(), held, "after the micro-step");
      zero.step();
      expect_usage(zero.memory_usage(), held, "after the step");
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, DuringAStep, ::testing::Values(1, 2, 3, 4),
                         [](const auto& param_info) { return std::to_string(param_info.param) + "_ranks"; });

}  // namespace
}  // namespace dtrain::test
