// A callback that fails on one rank ends the step on every rank, none
// hangs. Rank 1's FORWARD of (chunk 0, micro-batch 2) returns
// DT_ERR_INVALID_USAGE: rank 1's step returns that status naming the rank
// and the action. The others learn of it through their own waits: CTest runs
// this under dtrun with DTRAIN_TIMEOUT_MS=1500, and rank 1 stays alive for
// twice that, so each gets DT_ERR_TIMEOUT at its deadline (DT_ERR_REMOTE,
// had rank 1's process ended first, is as good). A world of one skips it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "mlp.hpp"
#include "stage_trainer.hpp"

namespace dtrain::testing {
namespace {

constexpr int kFailingRank = 1;

using PipelineFault = WorldFixture;

TEST_F(PipelineFault, FailingCallbackEndsTheStepEverywhere) {
  if (size_ < 2) GTEST_SKIP() << "needs 2 ranks or more";
  const PipelineModel model{size_, 1, 4, 24, 2};
  dt_pipeline_schedule_options sopts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  sopts.kind = DT_PIPELINE_1F1B;
  sopts.stages = size_;
  sopts.microbatches = model.microbatches;
  dt_pipeline_schedule* schedule = nullptr;
  ASSERT_EQ(dt_pipeline_schedule_create(&schedule, &sopts), DT_OK) << dt_error_last();
  StageTrainer trainer(model, rank_, make_rows(model.batch_rows(), 1), make_rows(model.batch_rows(), 2));
  if (rank_ == kFailingRank) trainer.fail_forward_at(0, 2, DT_ERR_INVALID_USAGE);
  const dt_pipeline_options opts = trainer.options(false);
  dt_pipeline* pipeline = nullptr;
  ASSERT_EQ(dt_pipeline_create(&pipeline, comm_, schedule, &opts), DT_OK) << dt_error_last();

  const auto start = std::chrono::steady_clock::now();
  const dt_status status = dt_pipeline_step(pipeline, nullptr);
  const std::string message = dt_error_last();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("step ended after %.2f s with %s: %s\n", seconds, dt_status_string(status), message.c_str());
  if (rank_ == kFailingRank) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    EXPECT_EQ(status, DT_ERR_INVALID_USAGE);
    EXPECT_NE(message.find("rank 1: FORWARD of chunk 0, micro-batch 2"), std::string::npos) << message;
  } else {
    EXPECT_TRUE(status == DT_ERR_TIMEOUT || status == DT_ERR_REMOTE) << dt_status_string(status) << ": " << message;
    EXPECT_NE(message.find("rank " + std::to_string(rank_) + ":"), std::string::npos) << message;
    EXPECT_NE(message.find("from rank"), std::string::npos) << message;
  }
  EXPECT_LT(seconds, 10.0);
  // The communicator is broken now, on every rank.
  EXPECT_EQ(dt_barrier(comm_), DT_ERR_ABORTED);
  EXPECT_EQ(dt_pipeline_destroy(pipeline), DT_OK);
  EXPECT_EQ(dt_pipeline_schedule_destroy(schedule), DT_OK);
}

}  // namespace
}  // namespace dtrain::testing
