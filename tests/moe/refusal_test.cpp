// The collective MoE calls refuse bad arguments on every rank instead of
// hanging: a rank's own invalid argument is its own error and DT_ERR_MISMATCH
// on the others; ranks that disagree about E, k, H or the operation all get
// DT_ERR_MISMATCH. After a refused exchange the plan still works.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/cuda_device.hpp"
#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "moe/moe_reference.hpp"

namespace {

using dtrain::testing::moe::Array;
using dtrain::testing::moe::RouterSpec;

constexpr std::int64_t kHidden = 3;

class MoeRefusal : public dtrain::testing::WorldFixture {
 protected:
  // Token t of this rank goes to expert (t + rank) % E, and to the next one when k = 2.
  static std::vector<std::int64_t> routing(std::int64_t tokens, int k, int experts, int rank) {
    std::vector<std::int64_t> e(static_cast<std::size_t>(tokens * k));
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (int j = 0; j < k; ++j) e[static_cast<std::size_t>(t * k + j)] = (t + rank + j) % experts;
    }
    return e;
  }

  // Every rank gets `mine` (this rank is `culprit`) or the others' status.
  void expect_refused(dt_status status, int culprit, dt_status mine, dt_status others, const char* what) {
    EXPECT_EQ(status, rank_ == culprit ? mine : others) << what << ": " << dt_error_last();
  }

  int last() const { return size_ - 1; }
};

TEST_F(MoeRefusal, DisagreeingExpertsTopKOrHiddenIsMismatchOnEveryRank) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  const int experts = rank_ == last() ? 2 * size_ * 2 : 2 * size_;
  dt_moe_options opts = RouterSpec{experts, 1}.options();
  Array<std::int64_t> e({4, 1}, routing(4, 1, experts, rank_));
  dt_moe_plan* plan = nullptr;
  EXPECT_EQ(dt_moe_plan_create(&plan, comm_, &e, kHidden, &opts), DT_ERR_MISMATCH) << dt_error_last();
  EXPECT_NE(std::string(dt_error_last()).find("num_experts"), std::string::npos) << dt_error_last();
  EXPECT_EQ(plan, nullptr);

  const int k = rank_ == last() ? 2 : 1;
  opts = RouterSpec{2 * size_, k}.options();
  Array<std::int64_t> ek({4, k}, routing(4, k, 2 * size_, rank_));
  EXPECT_EQ(dt_moe_plan_create(&plan, comm_, &ek, kHidden, &opts), DT_ERR_MISMATCH) << dt_error_last();
  EXPECT_NE(std::string(dt_error_last()).find("top_k"), std::string::npos) << dt_error_last();

  opts = RouterSpec{2 * size_, 1}.options();
  Array<std::int64_t> eh({4, 1}, routing(4, 1, 2 * size_, rank_));
  EXPECT_EQ(dt_moe_plan_create(&plan, comm_, &eh, rank_ == last() ? kHidden + 1 : kHidden, &opts),
            DT_ERR_MISMATCH)
      << dt_error_last();
  EXPECT_NE(std::string(dt_error_last()).find("hidden"), std::string::npos) << dt_error_last();
}

TEST_F(MoeRefusal, OneRanksBadArgumentsReachEveryRank) {
  const int experts = 2 * size_;
  const dt_moe_options opts = RouterSpec{experts, 2}.options();
  dt_moe_plan* plan = nullptr;
  {
    Array<std::int64_t> e({3, 2}, routing(3, 2, experts, rank_));
    if (rank_ == last()) e[1] = experts;  // out of range
    expect_refused(dt_moe_plan_create(&plan, comm_, &e, kHidden, &opts), last(), DT_ERR_INVALID_ARGUMENT,
                   DT_ERR_MISMATCH, "an expert index out of range");
  }
  {
    Array<std::int64_t> e({3, 2}, routing(3, 2, experts, rank_));
    if (rank_ == 0) e[1] = e[0];  // the same expert twice for one token
    expect_refused(dt_moe_plan_create(&plan, comm_, &e, kHidden, &opts), 0, DT_ERR_INVALID_ARGUMENT,
                   DT_ERR_MISMATCH, "a repeated expert");
  }
  {
    Array<std::int64_t> e({3, 2}, routing(3, 2, experts, rank_));
    expect_refused(dt_moe_plan_create(&plan, comm_, &e, rank_ == last() ? 0 : kHidden, &opts), last(),
                   DT_ERR_INVALID_ARGUMENT, DT_ERR_MISMATCH, "hidden 0");
    Array<std::int32_t> narrow({3, 2});
    expect_refused(dt_moe_plan_create(&plan, comm_, rank_ == 0 ? &narrow.tensor : &e.tensor, kHidden, &opts), 0,
                   DT_ERR_INVALID_ARGUMENT, DT_ERR_MISMATCH, "int32 experts");
    expect_refused(dt_moe_plan_create(rank_ == last() ? nullptr : &plan, comm_, &e, kHidden, &opts), last(),
                   DT_ERR_INVALID_ARGUMENT, DT_ERR_MISMATCH, "out NULL");
    expect_refused(dt_moe_plan_create(&plan, comm_, &e, kHidden, rank_ == 0 ? nullptr : &opts), 0,
                   DT_ERR_INVALID_ARGUMENT, DT_ERR_MISMATCH, "opts NULL");
  }
  EXPECT_EQ(plan, nullptr);
}

// How rows travel is chosen from the ranks' DTRAIN_MOE_EXCHANGE_BYTES,
// DTRAIN_MOE_DIRECT_BYTES and DTRAIN_MOE_DIRECT_ROUND_BYTES; one rank's bad
// value is its own DT_ERR_INVALID_ARGUMENT and the others' DT_ERR_MISMATCH,
// before anything is exchanged.
TEST_F(MoeRefusal, ABadRowsSettingOnOneRankReachesEveryRank) {
  const int experts = 2 * size_;
  const dt_moe_options opts = RouterSpec{experts, 2}.options();
  Array<std::int64_t> e({3, 2}, routing(3, 2, experts, rank_));
  for (const char* name : {"DTRAIN_MOE_EXCHANGE_BYTES", "DTRAIN_MOE_DIRECT_BYTES", "DTRAIN_MOE_DIRECT_ROUND_BYTES"}) {
    const std::string bad = name == std::string("DTRAIN_MOE_DIRECT_ROUND_BYTES") ? "0" : "lots";
    SCOPED_TRACE(std::string(name) + "=" + bad);
    dt_moe_plan* plan = nullptr;
    if (rank_ == last()) {
      ASSERT_EQ(setenv(name, bad.c_str(), 1), 0);
    }
    expect_refused(dt_moe_plan_create(&plan, comm_, &e, kHidden, &opts), last(), DT_ERR_INVALID_ARGUMENT,
                   DT_ERR_MISMATCH, (std::string(name) + "=" + bad).c_str());
    if (rank_ == last()) {
      EXPECT_NE(std::string(dt_error_last()).find(name), std::string::npos) << dt_error_last();
    }
    unsetenv(name);
    EXPECT_EQ(plan, nullptr);
  }
}

TEST_F(MoeRefusal, ExpertsNotDividingTheEpSizeAreRefusedEverywhere) {
  if (size_ < 2) GTEST_SKIP() << "every E divides a world of one";
  const dt_moe_options opts = RouterSpec{size_ + 1, 1}.options();
  Array<std::int64_t> e({2, 1}, routing(2, 1, size_ + 1, rank_));
  dt_moe_plan* plan = nullptr;
  EXPECT_EQ(dt_moe_plan_create(&plan, comm_, &e, kHidden, &opts), DT_ERR_INVALID_ARGUMENT) << dt_error_last();
  EXPECT_NE(std::string(dt_error_last()).find("multiple"), std::string::npos) << dt_error_last();
}

TEST_F(MoeRefusal, BadExchangeArgumentsReachEveryRankAndThePlanStillWorks) {
  const int experts = 2 * size_;
  const dt_moe_options opts = RouterSpec{experts, 1}.options();
  const std::int64_t tokens = 4;
  Array<std::int64_t> e({tokens, 1}, routing(tokens, 1, experts, rank_));
  dt_moe_plan* plan = nullptr;
  ASSERT_EQ(dt_moe_plan_create(&plan, comm_, &e, kHidden, &opts), DT_OK) << dt_error_last();
  std::int64_t rows = 0;
  ASSERT_EQ(dt_moe_plan_received(plan, &rows), DT_OK);
  std::int64_t wrong_n_counts[1] = {-1};
  EXPECT_EQ(dt_moe_plan_expert_counts(plan, wrong_n_counts, 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wrong_n_counts[0], -1);
  EXPECT_EQ(dt_moe_plan_received(nullptr, &rows), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_plan_received(plan, nullptr), DT_ERR_INVALID_ARGUMENT);
  int first = 0, count = 0;
  EXPECT_EQ(dt_moe_plan_local_experts(plan, nullptr, &count), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_plan_local_experts(nullptr, &first, &count), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_dispatch(nullptr, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);

  Array<float> x({tokens, kHidden}, 1.0f);
  Array<float> wide({tokens, kHidden + 1}, 1.0f);
  Array<float> received({rows, kHidden}, -1.0f);
  expect_refused(dt_moe_dispatch(plan, rank_ == 0 ? &wide.tensor : &x.tensor, &received), 0,
                 DT_ERR_INVALID_ARGUMENT, DT_ERR_MISMATCH, "tokens of the wrong width");
  EXPECT_EQ(received.values, std::vector<float>(static_cast<std::size_t>(rows * kHidden), -1.0f));
  Array<double> f64({tokens, kHidden});
  expect_refused(dt_moe_dispatch(plan, rank_ == last() ? &f64.tensor : &x.tensor, &received), last(),
                 DT_ERR_UNSUPPORTED, DT_ERR_MISMATCH, "float64 tokens");
  // Host memory labelled kDLCUDA: without a device it is refused as CUDA
  // memory. With one, what refuses it depends on the communicator's device
  // (tests/moe/device_layer_test.cpp places real device tensors).
  if (!dtrain::testing::cuda_device_present()) {
    x.tensor.device = {rank_ == 0 ? kDLCUDA : kDLCPU, 0};
    expect_refused(dt_moe_dispatch(plan, &x, &received), 0, DT_ERR_UNSUPPORTED, DT_ERR_MISMATCH, "CUDA tokens");
    x.tensor.device = {kDLCPU, 0};
  }

  Array<float> weights({tokens, 1}, 1.0f);
  Array<float> y({tokens, kHidden});
  Array<float> d_weights({tokens, 1});
  Array<float> d_rows({rows, kHidden});
  EXPECT_EQ(dt_moe_combine_backward(plan, &y, &weights, &d_rows, &d_weights), DT_ERR_INVALID_USAGE)
      << dt_error_last();

  if (size_ > 1) {
    // Rank 0 dispatches while the others run dispatch's backward pass.
    Array<float> d_tokens({tokens, kHidden});
    const dt_status status = rank_ == 0 ? dt_moe_dispatch(plan, &x, &received)
                                        : dt_moe_dispatch_backward(plan, &received, &d_tokens);
    EXPECT_EQ(status, DT_ERR_MISMATCH) << dt_error_last();
    EXPECT_NE(std::string(dt_error_last()).find("operation"), std::string::npos) << dt_error_last();
  }

  ASSERT_EQ(dt_moe_dispatch(plan, &x, &received), DT_OK) << dt_error_last();
  EXPECT_EQ(received.values, std::vector<float>(static_cast<std::size_t>(rows * kHidden), 1.0f));
  ASSERT_EQ(dt_moe_combine(plan, &received, &weights, &y), DT_OK) << dt_error_last();
  EXPECT_EQ(y.values, std::vector<float>(static_cast<std::size_t>(tokens * kHidden), 1.0f));
  EXPECT_EQ(dt_moe_plan_destroy(plan), DT_OK);
  EXPECT_EQ(dt_moe_plan_destroy(nullptr), DT_OK);
}

TEST_F(MoeRefusal, APlanOutlivingItsCommunicatorIsAborted) {
  dt_comm* ep = nullptr;
  ASSERT_EQ(dt_comm_split(&ep, comm_, 0, rank_), DT_OK) << dt_error_last();
  const dt_moe_options opts = RouterSpec{size_, 1}.options();
  Array<std::int64_t> e({2, 1}, routing(2, 1, size_, rank_));
  dt_moe_plan* plan = nullptr;
  ASSERT_EQ(dt_moe_plan_create(&plan, ep, &e, kHidden, &opts), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_comm_destroy(ep), DT_OK);
  std::int64_t rows = 0;
  ASSERT_EQ(dt_moe_plan_received(plan, &rows), DT_OK);  // the queries are local
  Array<float> x({2, kHidden}, 1.0f);
  Array<float> received({rows, kHidden});
  EXPECT_EQ(dt_moe_dispatch(plan, &x, &received), DT_ERR_ABORTED) << dt_error_last();
  EXPECT_EQ(dt_moe_plan_destroy(plan), DT_OK);
}

}  // namespace
