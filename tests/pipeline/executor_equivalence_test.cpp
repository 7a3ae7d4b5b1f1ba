// The executor against one process: an MLP of 24 linear + tanh layers split
// over p = 1..4 ranks (and v = 2 chunks per rank when interleaved), every
// schedule kind, m = 1..8 micro-batches of two rows each. The pipeline's loss
// and every parameter gradient must equal those of the whole model run over
// the whole batch in one process, to 1e-5 of the largest value (f32). Two
// steps run on each executor, so buffers are reused.
//
// CTest runs this alone (p = 1) and under dtrun with 4 ranks (p = 1..4; the
// ranks outside a group of p wait).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "mlp.hpp"
#include "pipeline_group.hpp"
#include "stage_trainer.hpp"

namespace dtrain::testing {
namespace {

constexpr int kLayers = 24;
constexpr int kRows = 2;
constexpr float kTolerance = 1e-5f;

float largest_magnitude(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const float bound = kTolerance * std::max(largest_magnitude(want), 1e-6f);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], bound) << what << " [" << i << "]";
}

struct Case {
  dt_pipeline_schedule_kind kind;
  int stages;
};

class PipelineEquivalence : public WorldFixture, public ::testing::WithParamInterface<Case> {
 protected:
  // Runs one shape on the group (when this rank is in it) and checks it.
  void check_shape(dt_comm* group, int microbatches) {
    const Case c = GetParam();
    const int chunks = c.kind == DT_PIPELINE_INTERLEAVED_1F1B ? 2 : 1;
    const PipelineModel model{c.stages, chunks, microbatches, kLayers, kRows};
    SCOPED_TRACE("p = " + std::to_string(c.stages) + ", v = " + std::to_string(chunks) +
                 ", m = " + std::to_string(microbatches));
    const std::vector<float> input = make_rows(model.batch_rows(), 1);
    const std::vector<float> target = make_rows(model.batch_rows(), 2);

    std::vector<Layer> reference;
    for (int l = 0; l < kLayers; ++l) reference.push_back(make_layer(l));
    const float reference_loss = reference_step(reference, input, target, model.batch_rows());

    int rank = 0;
    ASSERT_EQ(dt_comm_rank(group, &rank), DT_OK);
    dt_pipeline_schedule_options sopts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
    sopts.kind = c.kind;
    sopts.stages = c.stages;
    sopts.microbatches = microbatches;
    sopts.chunks = chunks;
    dt_pipeline_schedule* schedule = nullptr;
    ASSERT_EQ(dt_pipeline_schedule_create(&schedule, &sopts), DT_OK) << dt_error_last();
    int expected_peak = 0;
    ASSERT_EQ(dt_pipeline_schedule_peak_in_flight(schedule, rank, &expected_peak), DT_OK);

    StageTrainer trainer(model, rank, input, target);
    const dt_pipeline_options opts = trainer.options(c.kind == DT_PIPELINE_ZB_H1);
    dt_pipeline* pipeline = nullptr;
    ASSERT_EQ(dt_pipeline_create(&pipeline, group, schedule, &opts), DT_OK) << dt_error_last();
    ASSERT_EQ(dt_pipeline_schedule_destroy(schedule), DT_OK);  // the executor keeps its own copy

    for (int step = 0; step < 2; ++step) {
      trainer.zero();
      dt_pipeline_step_info info = DT_PIPELINE_STEP_INFO_INIT;
      ASSERT_EQ(dt_pipeline_step(pipeline, &info), DT_OK) << dt_error_last();
      EXPECT_TRUE(trainer.complaints().empty()) << trainer.complaints().front();
      EXPECT_EQ(info.peak_in_flight, expected_peak);
      EXPECT_GT(info.step_seconds, 0.0);
      EXPECT_GE(info.bubble_fraction, 0.0);
      EXPECT_LT(info.bubble_fraction, 1.0);
      EXPECT_LE(info.recv_wait_seconds, info.comm_wait_seconds);
      for (int chunk = 0; chunk < chunks; ++chunk) EXPECT_EQ(trainer.chunk_done_calls(chunk), 1);
      if (trainer.holds_last_stage()) {
        EXPECT_NEAR(trainer.loss(), reference_loss, kTolerance * std::fabs(reference_loss)) << "loss";
      }
      for (const auto& [index, layer] : trainer.layers()) {
        expect_close(layer.weight_grad, reference[index].weight_grad, "weight gradient of layer " + std::to_string(index));
        expect_close(layer.bias_grad, reference[index].bias_grad, "bias gradient of layer " + std::to_string(index));
      }
    }
    EXPECT_EQ(dt_pipeline_destroy(pipeline), DT_OK);
  }
};

TEST_P(PipelineEquivalence, MatchesOneProcess) {
  const Case c = GetParam();
  if (size_ < c.stages) GTEST_SKIP() << "needs " << c.stages << " ranks";
  dt_comm* group = nullptr;
  split_pipeline_group(comm_, rank_, c.stages, &group);
  if (group != nullptr) {
    const int step = c.kind == DT_PIPELINE_INTERLEAVED_1F1B ? c.stages : 1;
    for (int m = step; m <= 8; m += step) {
      check_shape(group, m);
      if (HasFatalFailure()) break;
    }
  }
  EXPECT_EQ(dt_comm_destroy(group), DT_OK);
  // Keeps the ranks outside the group, and ranks that failed, in step.
  EXPECT_EQ(dt_barrier(comm_), DT_OK) << dt_error_last();
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int p = 1; p <= 4; ++p) {
    for (auto kind : {DT_PIPELINE_GPIPE, DT_PIPELINE_1F1B, DT_PIPELINE_INTERLEAVED_1F1B, DT_PIPELINE_ZB_H1}) {
      all.push_back({kind, p});
    }
  }
  return all;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* const kNames[] = {"gpipe", "1f1b", "interleaved", "zb_h1"};
  return std::string(kNames[info.param.kind]) + "_p" + std::to_string(info.param.stages);
}

INSTANTIATE_TEST_SUITE_P(Kinds, PipelineEquivalence, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace dtrain::testing
