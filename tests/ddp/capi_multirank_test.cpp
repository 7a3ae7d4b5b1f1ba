// Data-parallel training through the C API, one process per rank: a small
// linear model y = W x + b with a squared-error loss, trained by dt_ddp and
// an SGD dt_optimizer on each rank's share of a deterministic batch, against
// the same model trained by one process on the whole batch, which every
// rank also computes. Replicas start from different weights and are made
// identical by dt_ddp_broadcast_parameters. Variants: uniform averaging,
// weighted averaging over batches of different sizes, gradient accumulation
// with sync off, and bf16 communication. Then refusals that must reach every
// rank instead of hanging.
//
// CTest runs this under dtrun with 2 and 3 ranks, and alone as a world of one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/linear_model.hpp"
#include "common/world_fixture.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::accumulate;
using dtrain::testing::initialise;
using Tensors = dtrain::testing::LinearTensors;

constexpr int kSteps = 5;

enum class Variant { uniform, weighted, accumulation, bf16 };

std::string name(Variant v) {
  switch (v) {
    case Variant::uniform: return "uniform";
    case Variant::weighted: return "weighted";
    case Variant::accumulation: return "accumulation";
    case Variant::bf16: return "bf16";
  }
  return "?";
}

class CapiRanks : public dtrain::testing::WorldFixture {
 protected:
  // Samples of rank r: [first(r), first(r + 1)). Uniform shares of 4, or
  // r + 2 samples for the weighted variant.
  int first(Variant v, int r) const { return v == Variant::weighted ? r * (r + 3) / 2 : 4 * r; }

  void train(Variant variant);
};

void CapiRanks::train(Variant variant) {
  SCOPED_TRACE(name(variant) + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_));
  const int root = size_ - 1;
  Tensors params, grads, reference, reference_grads;
  initialise(params, rank_);
  initialise(reference, root);
  ASSERT_EQ(dt_ddp_broadcast_parameters(comm_, params.pointers, 2, root), DT_OK) << dt_error_last();
  ASSERT_EQ(params.w, reference.w);
  ASSERT_EQ(params.b, reference.b);

  dt_ddp_options ddp_opts = DT_DDP_OPTIONS_INIT;
  ddp_opts.bucket_bytes = 4;  // W and b in buckets of their own, even as bf16
  ddp_opts.weighted = variant == Variant::weighted;
  if (variant == Variant::bf16) ddp_opts.compression = DT_DDP_COMPRESS_BF16;
  const DLTensor* grad_tensors[2] = {&grads.tensors[0], &grads.tensors[1]};
  dt_ddp* ddp = nullptr;
  ASSERT_EQ(dt_ddp_create(&ddp, comm_, grad_tensors, 2, &ddp_opts), DT_OK) << dt_error_last();
  std::size_t buckets = 0;
  ASSERT_EQ(dt_ddp_bucket_count(ddp, &buckets), DT_OK);
  EXPECT_EQ(buckets, 2u);

  dt_optimizer_options sgd = DT_OPTIMIZER_OPTIONS_INIT;
  sgd.kind = DT_OPTIM_SGD;
  sgd.lr = 0.1f;
  sgd.momentum = 0.9f;
  dt_optimizer *opt = nullptr, *reference_opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors, grads.tensors, 2, &sgd), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_optimizer_create(&reference_opt, reference.tensors, reference_grads.tensors, 2, &sgd), DT_OK);

  const int mine = first(variant, rank_), mine_end = first(variant, rank_ + 1);
  const int everyone = first(variant, size_);
  const float tolerance = variant == Variant::bf16 ? 2e-2f : 2e-5f;
  for (int step = 0; step < kSteps; ++step) {
    ASSERT_EQ(dt_optimizer_zero_grad(opt), DT_OK);
    ASSERT_EQ(dt_optimizer_zero_grad(reference_opt), DT_OK);
    accumulate(reference, step, 0, everyone, 1.0, reference_grads);

    if (variant == Variant::weighted) {
      ASSERT_EQ(dt_ddp_set_local_weight(ddp, mine_end - mine), DT_OK) << dt_error_last();
    }
    if (variant == Variant::accumulation) {
      // Two micro-batches of two samples; the first only accumulates.
      const int middle = (mine + mine_end) / 2;
      ASSERT_EQ(dt_ddp_set_sync(ddp, 0), DT_OK) << dt_error_last();
      accumulate(params, step, mine, middle, 0.5, grads);
      for (std::size_t i = 2; i-- > 0;) ASSERT_EQ(dt_ddp_mark_ready(ddp, i), DT_OK);
      ASSERT_EQ(dt_ddp_wait(ddp, -1), DT_OK);
      ASSERT_EQ(dt_ddp_set_sync(ddp, 1), DT_OK) << dt_error_last();
      accumulate(params, step, middle, mine_end, 0.5, grads);
    } else {
      accumulate(params, step, mine, mine_end, 1.0, grads);
    }
    // Backward produces b's gradient first; ranks mark in different orders
    // on alternate steps, which the buckets allow.
    if ((rank_ + step) % 2 == 0) {
      ASSERT_EQ(dt_ddp_mark_ready(ddp, 1), DT_OK) << dt_error_last();
      ASSERT_EQ(dt_ddp_mark_ready(ddp, 0), DT_OK) << dt_error_last();
    } else {
      ASSERT_EQ(dt_ddp_mark_ready(ddp, 0), DT_OK) << dt_error_last();
      ASSERT_EQ(dt_ddp_mark_ready(ddp, 1), DT_OK) << dt_error_last();
    }
    ASSERT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << dt_error_last();

    for (std::size_t k = 0; k < grads.w.size(); ++k) {
      ASSERT_NEAR(grads.w[k], reference_grads.w[k], tolerance * std::max(1.0f, std::fabs(reference_grads.w[k])))
          << "step " << step << " grad W[" << k << "]";
    }
    ASSERT_EQ(dt_optimizer_step(opt, nullptr), DT_OK) << dt_error_last();
    ASSERT_EQ(dt_optimizer_step(reference_opt, nullptr), DT_OK) << dt_error_last();
    for (std::size_t k = 0; k < params.w.size(); ++k) {
      ASSERT_NEAR(params.w[k], reference.w[k], tolerance * std::max(1.0f, std::fabs(reference.w[k])))
          << "step " << step << " W[" << k << "]";
    }
    for (std::size_t k = 0; k < params.b.size(); ++k) {
      ASSERT_NEAR(params.b[k], reference.b[k], tolerance * std::max(1.0f, std::fabs(reference.b[k])))
          << "step " << step << " b[" << k << "]";
    }
  }
  EXPECT_EQ(dt_optimizer_destroy(opt), DT_OK);
  EXPECT_EQ(dt_optimizer_destroy(reference_opt), DT_OK);
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(CapiRanks, UniformAverageTrainsLikeOneProcess) { train(Variant::uniform); }
TEST_F(CapiRanks, WeightedAverageOverUnevenBatches) { train(Variant::weighted); }
TEST_F(CapiRanks, GradientAccumulationWithSyncOff) { train(Variant::accumulation); }
TEST_F(CapiRanks, Bf16Communication) { train(Variant::bf16); }

// What only the C layer refuses (a NULL array, an options version this
// library does not know) still reaches every rank: the rank that refused
// gets its own error, the others DT_ERR_MISMATCH naming it; nobody hangs.
TEST_F(CapiRanks, ARankThatRefusesItsArgumentsIsHeardByAll) {
  const int refuser = size_ - 1;
  Tensors grads;
  const DLTensor* grad_tensors[2] = {&grads.tensors[0], &grads.tensors[1]};
  const std::string named = "rank " + std::to_string(refuser) + " refused";

  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  if (rank_ == refuser) opts.version = 0;
  dt_ddp* ddp = nullptr;
  dt_status status = dt_ddp_create(&ddp, comm_, grad_tensors, 2, &opts);
  EXPECT_EQ(ddp, nullptr);
  if (rank_ == refuser) {
    EXPECT_EQ(status, DT_ERR_INVALID_ARGUMENT) << dt_error_last();
    EXPECT_NE(std::string(dt_error_last()).find("options.version"), std::string::npos) << dt_error_last();
  } else {
    EXPECT_EQ(status, DT_ERR_MISMATCH) << dt_error_last();
    EXPECT_NE(std::string(dt_error_last()).find(named), std::string::npos) << dt_error_last();
  }

  status = dt_ddp_create(&ddp, comm_, rank_ == refuser ? nullptr : grad_tensors, 2, nullptr);
  EXPECT_EQ(ddp, nullptr);
  EXPECT_EQ(status, rank_ == refuser ? DT_ERR_INVALID_ARGUMENT : DT_ERR_MISMATCH) << dt_error_last();

  status = dt_ddp_create(rank_ == refuser ? nullptr : &ddp, comm_, grad_tensors, 2, nullptr);
  EXPECT_EQ(ddp, nullptr);
  EXPECT_EQ(status, rank_ == refuser ? DT_ERR_INVALID_ARGUMENT : DT_ERR_MISMATCH) << dt_error_last();

  Tensors params;
  status = dt_ddp_broadcast_parameters(comm_, rank_ == refuser ? nullptr : params.pointers, 2, 0);
  EXPECT_EQ(status, rank_ == refuser ? DT_ERR_INVALID_ARGUMENT : DT_ERR_MISMATCH) << dt_error_last();
  if (rank_ != refuser) {
    EXPECT_NE(std::string(dt_error_last()).find(named), std::string::npos) << dt_error_last();
  }

  // A core refusal (a bad option value) is heard the same way.
  opts = DT_DDP_OPTIONS_INIT;
  if (rank_ == refuser) opts.bucket_bytes = 0;
  status = dt_ddp_create(&ddp, comm_, grad_tensors, 2, &opts);
  EXPECT_EQ(status, rank_ == refuser ? DT_ERR_INVALID_ARGUMENT : DT_ERR_MISMATCH) << dt_error_last();

  // The communicator still works.
  ASSERT_EQ(dt_ddp_create(&ddp, comm_, grad_tensors, 2, nullptr), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_ddp_mark_ready(ddp, 0), DT_OK);
  ASSERT_EQ(dt_ddp_mark_ready(ddp, 1), DT_OK);
  ASSERT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(CapiRanks, DisagreementsAreMismatches) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  Tensors grads;
  const DLTensor* grad_tensors[2] = {&grads.tensors[0], &grads.tensors[1]};
  dt_ddp* ddp = nullptr;

  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  if (rank_ == 1) opts.compression = DT_DDP_COMPRESS_F16;
  EXPECT_EQ(dt_ddp_create(&ddp, comm_, grad_tensors, 2, &opts), DT_ERR_MISMATCH);
  EXPECT_NE(std::string(dt_error_last()).find("compression"), std::string::npos) << dt_error_last();
  EXPECT_EQ(ddp, nullptr);

  EXPECT_EQ(dt_ddp_create(&ddp, comm_, grad_tensors, rank_ == 1 ? 1 : 2, nullptr), DT_ERR_MISMATCH);
  EXPECT_EQ(ddp, nullptr);

  Tensors params;
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, params.pointers, 2, rank_ == 1 ? 0 : 1), DT_ERR_MISMATCH);
  EXPECT_NE(std::string(dt_error_last()).find("root"), std::string::npos) << dt_error_last();
}

}  // namespace
