// An optimizer over this rank's shard of a flat model, with the communicator
// in its options, against one process stepping the whole model: the same
// global norm, the same clipping, the same updated weights, and every rank
// skipping when any rank's gradients hold inf. CTest runs this under dtrun
// with 2 and 3 ranks, and alone as a world of one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dtrain.h"
#include "optim/tensors.hpp"

namespace dtrain::testing {
namespace {

constexpr std::int64_t kModel = 2003;

class Sharded : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(dt_comm_create(&comm_, nullptr), DT_OK) << dt_error_last();
    ASSERT_EQ(dt_comm_rank(comm_, &rank_), DT_OK);
    ASSERT_EQ(dt_comm_size(comm_, &size_), DT_OK);
    first_ = kModel * rank_ / size_;
    count_ = kModel * (rank_ + 1) / size_ - first_;
  }
  void TearDown() override { dt_comm_destroy(comm_); }

  dt_comm* comm_ = nullptr;
  int rank_ = 0, size_ = 1;
  std::int64_t first_ = 0, count_ = 0;
};

TEST_F(Sharded, ShardsStepLikeTheWholeModel) {
  for (dt_optimizer_kind kind : {DT_OPTIM_SGD, DT_OPTIM_ADAMW}) {
    dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
    opts.kind = kind;
    opts.lr = 0.01f;
    opts.momentum = kind == DT_OPTIM_SGD ? 0.9f : 0.0f;
    opts.max_grad_norm = 3.0f;

    TensorSet whole(Precision::f32, {{kModel}}), whole_grads(Precision::f32, {{kModel}});
    TensorSet shard(Precision::f32, {{count_}}), shard_grads(Precision::f32, {{count_}});
    fill_params(whole, 41);
    for (std::int64_t j = 0; j < count_; ++j) shard.set(0, j, whole.get(0, first_ + j));

    dt_optimizer *single = nullptr, *mine = nullptr;
    ASSERT_EQ(dt_optimizer_create(&single, whole.tensors(), whole_grads.tensors(), 1, &opts), DT_OK);
    opts.comm = comm_;
    ASSERT_EQ(dt_optimizer_create(&mine, shard.tensors(), shard_grads.tensors(), 1, &opts), DT_OK)
        << dt_error_last();

    for (int step = 1; step <= 4; ++step) {
      fill_grads(whole_grads, 900 + step);
      for (std::int64_t j = 0; j < count_; ++j) shard_grads.set(0, j, whole_grads.get(0, first_ + j));
      dt_optimizer_step_info expected = DT_OPTIMIZER_STEP_INFO_INIT, got = DT_OPTIMIZER_STEP_INFO_INIT;
      ASSERT_EQ(dt_optimizer_step(single, &expected), DT_OK);
      ASSERT_EQ(dt_optimizer_step(mine, &got), DT_OK) << dt_error_last();
      ASSERT_GT(expected.grad_norm, 3.0);  // clipping is on
      EXPECT_NEAR(got.grad_norm, expected.grad_norm, 1e-12 * expected.grad_norm);
      EXPECT_EQ(got.step, step);
      for (std::int64_t j = 0; j < count_; ++j) {
        // Equal up to the last bit of the clipping factor, whose norm was
        // summed in another order.
        const float want = whole.get(0, first_ + j);
        ASSERT_NEAR(shard.get(0, j), want, 1e-6f * std::fabs(want)) << "step " << step << " element " << j;
      }
    }
    dt_optimizer_destroy(single);
    dt_optimizer_destroy(mine);
  }
}

TEST_F(Sharded, InfOnOneRankSkipsEveryRank) {
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.loss_scale = 1024.0f;
  opts.dynamic_loss_scale = 1;
  opts.comm = comm_;
  TensorSet shard(Precision::f16, {{count_}}), grads(Precision::f16, {{count_}});
  fill_params(shard, 43);
  fill_grads(grads, 44, 1024.0f);
  if (rank_ == size_ - 1) grads.set(0, count_ - 1, std::numeric_limits<float>::infinity());
  const auto before = shard.bytes();

  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, shard.tensors(), grads.tensors(), 1, &opts), DT_OK) << dt_error_last();
  dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
  ASSERT_EQ(dt_optimizer_step(opt, &info), DT_OK) << dt_error_last();
  EXPECT_EQ(info.skipped, 1);
  EXPECT_EQ(info.loss_scale, 512.0f);
  EXPECT_EQ(shard.bytes(), before);
  dt_optimizer_destroy(opt);
}

TEST_F(Sharded, StepAfterTheCommunicatorIsGoneFailsCleanly) {
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  dt_comm* own = nullptr;
  ASSERT_EQ(dt_comm_split(&own, comm_, 0, rank_), DT_OK) << dt_error_last();
  opts.comm = own;
  TensorSet shard(Precision::f32, {{count_}}), grads(Precision::f32, {{count_}});
  fill_params(shard, 45);
  fill_grads(grads, 46);
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, shard.tensors(), grads.tensors(), 1, &opts), DT_OK);
  ASSERT_EQ(dt_comm_destroy(own), DT_OK);
  const auto before = shard.bytes();
  EXPECT_EQ(dt_optimizer_step(opt, nullptr), DT_ERR_ABORTED);
  EXPECT_EQ(shard.bytes(), before);
  dt_optimizer_destroy(opt);
}

}  // namespace
}  // namespace dtrain::testing
