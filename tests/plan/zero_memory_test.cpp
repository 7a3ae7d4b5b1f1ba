// The planner's ZeRO memory against what a dt_zero really holds: for each
// stage, dtype and unit layout (divisible and padded), dt_plan_zero_memory()
// must give exactly the bytes dt_zero_memory_usage() reports after
// dt_zero_create() on this rank, field by field, peak included.
//
// CTest runs this alone (a world of one) and under dtrun with 3 ranks,
// where the padding lands on the last ranks' shards.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"

namespace {

class ZeroMemory : public dtrain::testing::WorldFixture {
 protected:
  // Creates a dt_zero over parameters of `counts` elements, one unit each,
  // and compares its usage with the prediction.
  void expect_prediction(const std::vector<int64_t>& counts, int stage, DLDataType dtype,
                         const dt_optimizer_options* optim) {
    std::vector<std::vector<float>> storage;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<DLTensor> tensors;
    for (int64_t n : counts) {
      storage.emplace_back(static_cast<std::size_t>(n), 0.0f);  // 4 bytes cover every dtype here
      shapes.push_back({n});
    }
    for (std::size_t i = 0; i < counts.size(); ++i) {
      DLTensor t{};
      t.data = storage[i].data();
      t.device = {kDLCPU, 0};
      t.ndim = 1;
      t.shape = shapes[i].data();
      t.dtype = dtype;
      tensors.push_back(t);
    }
    std::vector<const DLTensor*> pointers;
    for (const DLTensor& t : tensors) pointers.push_back(&t);
    const std::vector<size_t> units(counts.size(), 1);
    dt_zero_options opts = DT_ZERO_OPTIONS_INIT;
    opts.stage = stage;
    opts.unit_sizes = units.data();
    opts.unit_count = units.size();
    dt_zero* z = nullptr;
    ASSERT_EQ(dt_zero_create(&z, comm_, pointers.data(), pointers.size(), optim, &opts), DT_OK) << dt_error_last();
    dt_zero_memory measured = DT_ZERO_MEMORY_INIT;
    ASSERT_EQ(dt_zero_memory_usage(z, &measured), DT_OK);
    EXPECT_EQ(dt_zero_destroy(z), DT_OK);

    dt_zero_memory predicted = DT_ZERO_MEMORY_INIT;
    ASSERT_EQ(dt_plan_zero_memory(counts.data(), counts.size(), stage, size_, rank_, dtype, optim, &predicted), DT_OK)
        << dt_error_last();
    const std::string where = "stage " + std::to_string(stage) + ", rank " + std::to_string(rank_) + " of " +
                              std::to_string(size_) + ", dtype bits " + std::to_string(dtype.bits);
    EXPECT_EQ(predicted.parameters, measured.parameters) << where;
    EXPECT_EQ(predicted.gradients, measured.gradients) << where;
    EXPECT_EQ(predicted.optimizer_state, measured.optimizer_state) << where;
    EXPECT_EQ(predicted.master_weights, measured.master_weights) << where;
    EXPECT_EQ(predicted.communication, measured.communication) << where;
    EXPECT_EQ(predicted.padding, measured.padding) << where;
    EXPECT_EQ(predicted.peak, measured.peak) << where;
  }
};

constexpr DLDataType kBf16{kDLBfloat, 16, 1};
constexpr DLDataType kF32{kDLFloat, 32, 1};

TEST_F(ZeroMemory, DivisibleUnitsEveryStageAdamW) {
  for (int stage = 0; stage <= 3; ++stage) expect_prediction({360, 480, 360}, stage, kBf16, nullptr);
}

TEST_F(ZeroMemory, PaddedUnitsEveryStageAndDtype) {
  for (int stage = 0; stage <= 3; ++stage) {
    expect_prediction({500, 300, 201, 7}, stage, kBf16, nullptr);
    expect_prediction({500, 300, 201, 7}, stage, kF32, nullptr);
  }
}

TEST_F(ZeroMemory, SgdWithMomentumKeepsOneStateBuffer) {
  dt_optimizer_options sgd = DT_OPTIMIZER_OPTIONS_INIT;
  sgd.kind = DT_OPTIM_SGD;
  sgd.momentum = 0.9f;
  for (int stage = 0; stage <= 3; ++stage) expect_prediction({1001, 17}, stage, kBf16, &sgd);
}

TEST_F(ZeroMemory, BadArgumentsAreRefused) {
  const int64_t counts[] = {10, 20};
  dt_zero_memory out = DT_ZERO_MEMORY_INIT;
  EXPECT_EQ(dt_plan_zero_memory(nullptr, 2, 1, 2, 0, kBf16, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_zero_memory(counts, 0, 1, 2, 0, kBf16, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_zero_memory(counts, 2, 4, 2, 0, kBf16, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_zero_memory(counts, 2, 1, 0, 0, kBf16, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_zero_memory(counts, 2, 1, 2, 2, kBf16, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_zero_memory(counts, 2, 1, 2, 0, DLDataType{kDLInt, 32, 1}, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("dtype"), std::string::npos) << dt_error_last();
  const int64_t negative[] = {10, -1};
  EXPECT_EQ(dt_plan_zero_memory(negative, 2, 1, 2, 0, kBf16, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  out.version = 0;
  EXPECT_EQ(dt_plan_zero_memory(counts, 2, 1, 2, 0, kBf16, nullptr, &out), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
