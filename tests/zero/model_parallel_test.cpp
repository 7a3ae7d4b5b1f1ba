// ZeRO on one part of a model split over two model-parallel ranks, through
// the C API, one process per rank. Rank r is model rank r % 2 and data rank
// r / 2. The model is a vector s that both model ranks hold whole (as every
// tensor-parallel rank holds a layer norm's weight) and a vector W of which
// each model rank holds one half. Each rank's dt_zero trains [s, its half of
// W] over its data-parallel ranks, with the model's other half's rank as
// optim->comm and s left out of the norm on model rank 1; AdamW clips the
// whole model's norm. The reference is one process training [s, W] with a
// dt_optimizer on the mean gradient of every data rank: every stage, with a
// unit per parameter and with both in one unit (so that s straddles the
// shards), ends with the same weights and reports the same norm. Then the
// refusals of bad norm options, on every rank.
//
// CTest runs this under dtrun with 2 ranks (one data rank) and 4 (two).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"

namespace {

constexpr int kShared = 6;  // elements of s
constexpr int kHalf = 4;    // elements of each model rank's half of W
constexpr int kSteps = 4;

// The gradient data rank d computes at step t for weights (s, W): it
// depends on the weights, so that a wrong update shows in later steps.
float shared_gradient(int j, int d, int t, float s) { return std::sin(0.7f * j + 0.5f * d + t) + s; }
float split_gradient(int i, int d, int t, float w) { return 0.5f * std::cos(0.3f * i + d + t) + 2.0f * w; }

float initial_shared(int j) { return 0.2f * std::cos(j + 1.0f); }
float initial_split(int i) { return 0.1f * std::sin(i + 1.0f); }

dt_optimizer_options adamw() {
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.kind = DT_OPTIM_ADAMW;
  opts.lr = 0.05f;
  opts.weight_decay = 0.01f;
  opts.max_grad_norm = 0.5f;  // below every step's norm: each step clips
  return opts;
}

DLTensor vector_tensor(std::vector<float>& data, int64_t& shape) {
  shape = static_cast<int64_t>(data.size());
  return DLTensor{data.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 0};
}

double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < want.size(); ++k) {
    diff = std::max(diff, std::fabs(static_cast<double>(got[k]) - want[k]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[k])));
  }
  return diff / scale;
}

class ModelParallelZero : public dtrain::testing::WorldFixture {
 protected:
  void SetUp() override {
    WorldFixture::SetUp();
    if (size_ % 2 != 0) GTEST_SKIP() << "needs an even number of ranks (two model ranks), not " << size_;
    model_rank_ = rank_ % 2;
    data_rank_ = rank_ / 2;
    data_ranks_ = size_ / 2;
    ASSERT_EQ(dt_comm_split(&replicas_, comm_, model_rank_, data_rank_), DT_OK) << dt_error_last();
    ASSERT_EQ(dt_comm_split(&model_, comm_, data_rank_, model_rank_), DT_OK) << dt_error_last();
  }
  void TearDown() override {
    dt_comm_destroy(model_);
    dt_comm_destroy(replicas_);
    WorldFixture::TearDown();
  }

  // This rank's dt_zero over [s, its half of W]; nullptr on failure.
  dt_zero* create(int stage, bool one_unit, const std::vector<size_t>& excluded, dt_comm* model) {
    std::vector<float> s(kShared), w(kHalf);
    for (int j = 0; j < kShared; ++j) s[(size_t)j] = initial_shared(j);
    for (int i = 0; i < kHalf; ++i) w[(size_t)i] = initial_split(model_rank_ * kHalf + i);
    int64_t shapes[2];
    DLTensor tensors[2] = {vector_tensor(s, shapes[0]), vector_tensor(w, shapes[1])};
    const DLTensor* params[2] = {&tensors[0], &tensors[1]};
    dt_optimizer_options optim = adamw();
    optim.comm = model;
    dt_zero_options opts = DT_ZERO_OPTIONS_INIT;
    opts.stage = stage;
    const size_t both[1] = {2};
    if (one_unit) {
      opts.unit_sizes = both;
      opts.unit_count = 1;
    } else {
      opts.bucket_bytes = 1;  // stages 0-2: a unit per parameter, as stage 3 by default
    }
    opts.norm_excluded = excluded.empty() ? nullptr : excluded.data();
    opts.norm_excluded_count = excluded.size();
    dt_zero* z = nullptr;
    last_status_ = dt_zero_create(&z, replicas_, params, 2, &optim, &opts);
    return z;
  }

  std::vector<size_t> excluded_here() const { return model_rank_ == 1 ? std::vector<size_t>{0} : std::vector<size_t>{}; }

  // Parameter i's values (its unit gathered around the read).
  std::vector<float> read(dt_zero* z, size_t i) {
    size_t units = 0;
    EXPECT_EQ(dt_zero_unit_count(z, &units), DT_OK);
    const size_t unit = units == 1 ? 0 : i;
    EXPECT_EQ(dt_zero_gather(z, unit), DT_OK) << dt_error_last();
    EXPECT_EQ(dt_zero_gather_wait(z, unit, -1), DT_OK) << dt_error_last();
    DLTensor view;
    EXPECT_EQ(dt_zero_parameter(z, i, &view), DT_OK) << dt_error_last();
    const auto* data = static_cast<const float*>(view.data);
    std::vector<float> values(data, data + view.shape[0]);
    EXPECT_EQ(dt_zero_release(z, unit), DT_OK);
    return values;
  }

  // One step on this data rank's gradient; returns the norm dt_zero_step saw.
  double train_step(dt_zero* z, int step) {
    const std::vector<float> s = read(z, 0), w = read(z, 1);
    size_t units = 0;
    EXPECT_EQ(dt_zero_unit_count(z, &units), DT_OK);
    for (size_t u = units; u-- > 0;) {
      EXPECT_EQ(dt_zero_gather(z, u), DT_OK);
      EXPECT_EQ(dt_zero_gather_wait(z, u, -1), DT_OK);
      for (size_t i = 2; i-- > 0;) {
        if (units == 2 && i != u) continue;
        DLTensor g;
        EXPECT_EQ(dt_zero_gradient(z, i, &g), DT_OK) << dt_error_last();
        auto* data = static_cast<float*>(g.data);
        if (i == 0) {
          for (int j = 0; j < kShared; ++j) data[j] += shared_gradient(j, data_rank_, step, s[(size_t)j]);
        } else {
          for (int k = 0; k < kHalf; ++k)
            data[k] += split_gradient(model_rank_ * kHalf + k, data_rank_, step, w[(size_t)k]);
        }
        EXPECT_EQ(dt_zero_mark_ready(z, i), DT_OK) << dt_error_last();
      }
      EXPECT_EQ(dt_zero_release(z, u), DT_OK);
    }
    EXPECT_EQ(dt_zero_wait(z, -1), DT_OK) << dt_error_last();
    dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
    EXPECT_EQ(dt_zero_step(z, &info), DT_OK) << dt_error_last();
    return info.grad_norm;
  }

  // One process, the whole model, the mean of every data rank's gradient.
  void train_alone(std::vector<float>& s, std::vector<float>& w, std::vector<double>& norms) {
    s.resize(kShared);
    w.resize(2 * kHalf);
    for (int j = 0; j < kShared; ++j) s[(size_t)j] = initial_shared(j);
    for (int i = 0; i < 2 * kHalf; ++i) w[(size_t)i] = initial_split(i);
    std::vector<float> gs(s.size()), gw(w.size());
    int64_t shapes[4];
    DLTensor params[2] = {vector_tensor(s, shapes[0]), vector_tensor(w, shapes[1])};
    DLTensor grads[2] = {vector_tensor(gs, shapes[2]), vector_tensor(gw, shapes[3])};
    const dt_optimizer_options opts = adamw();
    dt_optimizer* opt = nullptr;
    ASSERT_EQ(dt_optimizer_create(&opt, params, grads, 2, &opts), DT_OK) << dt_error_last();
    for (int step = 0; step < kSteps; ++step) {
      for (int j = 0; j < kShared; ++j) {
        double sum = 0;
        for (int d = 0; d < data_ranks_; ++d) sum += shared_gradient(j, d, step, s[(size_t)j]);
        gs[(size_t)j] = static_cast<float>(sum / data_ranks_);
      }
      for (int i = 0; i < 2 * kHalf; ++i) {
        double sum = 0;
        for (int d = 0; d < data_ranks_; ++d) sum += split_gradient(i, d, step, w[(size_t)i]);
        gw[(size_t)i] = static_cast<float>(sum / data_ranks_);
      }
      dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
      ASSERT_EQ(dt_optimizer_step(opt, &info), DT_OK) << dt_error_last();
      norms.push_back(info.grad_norm);
    }
    dt_optimizer_destroy(opt);
  }

  dt_comm* replicas_ = nullptr;  // the data-parallel ranks of this model rank
  dt_comm* model_ = nullptr;     // the two model ranks of this data rank
  int model_rank_ = 0, data_rank_ = 0, data_ranks_ = 1;
  dt_status last_status_ = DT_OK;
};

TEST_F(ModelParallelZero, EveryStageTrainsTheSplitModelLikeOneProcess) {
  std::vector<float> s_ref, w_ref;
  std::vector<double> norms_ref;
  train_alone(s_ref, w_ref, norms_ref);
  ASSERT_GT(norms_ref[0], adamw().max_grad_norm);  // the test exercises clipping
  const std::vector<float> half_ref(w_ref.begin() + model_rank_ * kHalf, w_ref.begin() + (model_rank_ + 1) * kHalf);
  for (bool one_unit : {false, true}) {
    for (int stage = 0; stage <= 3; ++stage) {
      SCOPED_TRACE("stage " + std::to_string(stage) + (one_unit ? ", one unit" : ", a unit per parameter"));
      dt_zero* z = create(stage, one_unit, excluded_here(), model_);
      ASSERT_NE(z, nullptr) << dt_error_last();
      for (int step = 0; step < kSteps; ++step) {
        const double norm = train_step(z, step);
        EXPECT_NEAR(norm, norms_ref[(size_t)step], 1e-5 * norms_ref[(size_t)step]) << "step " << step;
      }
      EXPECT_LE(max_relative_error(read(z, 0), s_ref), 1e-5);
      EXPECT_LE(max_relative_error(read(z, 1), half_ref), 1e-5);
      EXPECT_EQ(dt_zero_destroy(z), DT_OK);
    }
  }
}

// Without the exclusion s counts twice: the norm is the reference's only
// when the test's model is wrong.
TEST_F(ModelParallelZero, CountingTheReplicaTwiceChangesTheNorm) {
  std::vector<float> s_ref, w_ref;
  std::vector<double> norms_ref;
  train_alone(s_ref, w_ref, norms_ref);
  dt_zero* z = create(1, false, {}, model_);
  ASSERT_NE(z, nullptr) << dt_error_last();
  EXPECT_GT(train_step(z, 0), norms_ref[0] * (1 + 1e-3));
  EXPECT_EQ(dt_zero_destroy(z), DT_OK);
}

TEST_F(ModelParallelZero, BadNormOptionsAreRefusedOnEveryRank) {
  // Exclusions with no model communicator to count them on.
  EXPECT_EQ(create(1, false, {0}, nullptr), nullptr);
  EXPECT_EQ(last_status_, DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("needs optim->comm"), std::string::npos) << dt_error_last();
  // An index past the parameters, and one repeated.
  EXPECT_EQ(create(1, false, {2}, model_), nullptr);
  EXPECT_EQ(last_status_, DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("norm_excluded[0] = 2"), std::string::npos) << dt_error_last();
  EXPECT_EQ(create(1, false, {1, 1}, model_), nullptr);
  EXPECT_EQ(last_status_, DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("repeated"), std::string::npos) << dt_error_last();
  // The dt_zero's own communicator as the model's.
  EXPECT_EQ(create(1, false, {}, replicas_), nullptr);
  EXPECT_EQ(last_status_, DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("own communicator"), std::string::npos) << dt_error_last();
  // Data ranks that disagree about the exclusions: every one hears of it.
  if (data_ranks_ > 1) {
    EXPECT_EQ(create(1, false, data_rank_ == 0 ? std::vector<size_t>{0} : std::vector<size_t>{}, model_), nullptr);
    EXPECT_EQ(last_status_, DT_ERR_MISMATCH) << dt_error_last();
    EXPECT_NE(std::string(dt_error_last()).find("norm_excluded"), std::string::npos) << dt_error_last();
  }
  // And the options of version 2, before the exclusions, still work.
  dt_zero_options old = DT_ZERO_OPTIONS_INIT;
  old.version = 2;
  int64_t shape = kShared;
  std::vector<float> s(kShared, 1.0f);
  DLTensor t{s.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 0};
  const DLTensor* params[1] = {&t};
  dt_zero* z = nullptr;
  EXPECT_EQ(dt_zero_create(&z, replicas_, params, 1, nullptr, &old), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_zero_destroy(z), DT_OK);
}

}  // namespace
