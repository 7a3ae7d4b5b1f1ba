// dt_pipeline_create and dt_pipeline_step refuse what the header refuses,
// with its exact status, and leave `*out` as it was. Local calls: any world.
#include <gtest/gtest.h>

#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "mlp.hpp"
#include "stage_trainer.hpp"

namespace dtrain::testing {
namespace {

class PipelineRefusals : public WorldFixture {
 protected:
  void SetUp() override {
    WorldFixture::SetUp();
    schedule_ = make_schedule(DT_PIPELINE_1F1B, size_);
    zero_bubble_ = make_schedule(DT_PIPELINE_ZB_H1, size_);
  }
  void TearDown() override {
    dt_pipeline_schedule_destroy(schedule_);
    dt_pipeline_schedule_destroy(zero_bubble_);
    WorldFixture::TearDown();
  }

  static dt_pipeline_schedule* make_schedule(dt_pipeline_schedule_kind kind, int stages) {
    dt_pipeline_schedule_options opts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
    opts.kind = kind;
    opts.stages = stages;
    opts.microbatches = 2;
    dt_pipeline_schedule* s = nullptr;
    EXPECT_EQ(dt_pipeline_schedule_create(&s, &opts), DT_OK) << dt_error_last();
    return s;
  }

  // Expects dt_pipeline_create to refuse `opts` over `schedule` with
  // `status`, naming `field`, and to leave `out` alone.
  void expect_refused(const dt_pipeline_schedule* schedule, const dt_pipeline_options* opts, dt_status status,
                      const char* field) {
    dt_pipeline* sentinel = reinterpret_cast<dt_pipeline*>(0x1);
    dt_pipeline* out = sentinel;
    EXPECT_EQ(dt_pipeline_create(&out, comm_, schedule, opts), status) << field;
    EXPECT_NE(std::string(dt_error_last()).find(field), std::string::npos) << dt_error_last();
    EXPECT_EQ(out, sentinel);
  }

  dt_pipeline_options valid_options(bool split_backward) { return trainer_.options(split_backward); }

  PipelineModel model_{1, 1, 2, 24, 2};
  StageTrainer trainer_{model_, 0, make_rows(4, 1), make_rows(4, 2)};
  dt_pipeline_schedule* schedule_ = nullptr;
  dt_pipeline_schedule* zero_bubble_ = nullptr;
};

TEST_F(PipelineRefusals, OptionsInit) {
  dt_pipeline_options opts;
  EXPECT_EQ(dt_pipeline_options_init(&opts, DT_PIPELINE_OPTIONS_VERSION), DT_OK);
  const dt_pipeline_options defaults = DT_PIPELINE_OPTIONS_INIT;
  EXPECT_EQ(opts.version, defaults.version);
  EXPECT_EQ(opts.activation_elements, 0);
  EXPECT_EQ(opts.activation_dtype.code, kDLFloat);
  EXPECT_EQ(opts.activation_dtype.bits, 32);
  EXPECT_EQ(opts.forward, nullptr);
  EXPECT_EQ(dt_pipeline_options_init(nullptr, DT_PIPELINE_OPTIONS_VERSION), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_options_init(&opts, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_options_init(&opts, DT_PIPELINE_OPTIONS_VERSION + 1), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(PipelineRefusals, NullArguments) {
  const dt_pipeline_options opts = valid_options(false);
  dt_pipeline* out = nullptr;
  EXPECT_EQ(dt_pipeline_create(nullptr, comm_, schedule_, &opts), DT_ERR_INVALID_ARGUMENT);
  expect_refused(schedule_, nullptr, DT_ERR_INVALID_ARGUMENT, "opts");
  EXPECT_EQ(dt_pipeline_create(&out, nullptr, schedule_, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("comm"), std::string::npos);
  expect_refused(nullptr, &opts, DT_ERR_INVALID_ARGUMENT, "schedule");
  EXPECT_EQ(dt_pipeline_step(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_pipeline_destroy(nullptr), DT_OK);
}

TEST_F(PipelineRefusals, BadOptions) {
  dt_pipeline_options opts = valid_options(false);
  opts.version = 0;
  expect_refused(schedule_, &opts, DT_ERR_INVALID_ARGUMENT, "opts.version");
  opts = valid_options(false);
  opts.version = DT_PIPELINE_OPTIONS_VERSION + 1;
  expect_refused(schedule_, &opts, DT_ERR_INVALID_ARGUMENT, "opts.version");
  opts = valid_options(false);
  opts.activation_elements = 0;
  expect_refused(schedule_, &opts, DT_ERR_INVALID_ARGUMENT, "opts->activation_elements");
  opts = valid_options(false);
  opts.activation_dtype = DLDataType{kDLComplex, 64, 1};
  expect_refused(schedule_, &opts, DT_ERR_INVALID_ARGUMENT, "opts->activation_dtype");
  opts = valid_options(false);
  opts.forward = nullptr;
  expect_refused(schedule_, &opts, DT_ERR_INVALID_ARGUMENT, "opts->forward");
  opts = valid_options(false);
  opts.backward = nullptr;
  expect_refused(schedule_, &opts, DT_ERR_INVALID_ARGUMENT, "opts->backward");
  opts = valid_options(true);
  expect_refused(schedule_, &opts, DT_ERR_INVALID_ARGUMENT, "opts->backward_weight");
  opts = valid_options(false);
  expect_refused(zero_bubble_, &opts, DT_ERR_INVALID_ARGUMENT, "opts->backward_weight");
}

TEST_F(PipelineRefusals, GroupSizeMustBeTheStages) {
  dt_pipeline_schedule* wider = make_schedule(DT_PIPELINE_1F1B, size_ + 1);
  const dt_pipeline_options opts = valid_options(false);
  expect_refused(wider, &opts, DT_ERR_INVALID_ARGUMENT, "comm has");
  dt_pipeline_schedule_destroy(wider);
}

TEST_F(PipelineRefusals, StepInfoVersion) {
  if (size_ != 1) GTEST_SKIP() << "a step needs the whole pipeline group; run alone";
  const dt_pipeline_options opts = valid_options(false);
  dt_pipeline* pipeline = nullptr;
  ASSERT_EQ(dt_pipeline_create(&pipeline, comm_, schedule_, &opts), DT_OK) << dt_error_last();
  dt_pipeline_step_info info = DT_PIPELINE_STEP_INFO_INIT;
  info.version = 0;
  EXPECT_EQ(dt_pipeline_step(pipeline, &info), DT_ERR_INVALID_ARGUMENT);
  info.version = DT_PIPELINE_STEP_INFO_VERSION + 1;
  EXPECT_EQ(dt_pipeline_step(pipeline, &info), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("info->version"), std::string::npos) << dt_error_last();
  EXPECT_EQ(dt_pipeline_step(pipeline, nullptr), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_pipeline_destroy(pipeline), DT_OK);
}

}  // namespace
}  // namespace dtrain::testing
