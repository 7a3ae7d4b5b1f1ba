// The loss scaler: gradients arrive multiplied by the loss scale and are
// divided by it; an inf or NaN gradient skips the step, changing nothing, and
// a dynamic scale backs off then, and grows after growth_interval clean steps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dtrain.h"
#include "optim/reference.hpp"
#include "optim/tensors.hpp"

namespace dtrain::testing {
namespace {

dt_optimizer_options dynamic_adamw(float scale, int growth_interval) {
  dt_optimizer_options o = DT_OPTIMIZER_OPTIONS_INIT;
  o.lr = 0.01f;
  o.loss_scale = scale;
  o.dynamic_loss_scale = 1;
  o.growth_interval = growth_interval;
  return o;
}

struct Model {
  TensorSet params{Precision::f16, odd_shapes()};
  TensorSet grads{Precision::f16, odd_shapes()};
  dt_optimizer* opt = nullptr;

  explicit Model(const dt_optimizer_options& opts) {
    fill_params(params, 21);
    EXPECT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), params.size(), &opts), DT_OK)
        << dt_error_last();
  }
  ~Model() { dt_optimizer_destroy(opt); }

  dt_optimizer_step_info step() {
    dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
    EXPECT_EQ(dt_optimizer_step(opt, &info), DT_OK) << dt_error_last();
    return info;
  }
  float scale() const {
    float s = 0.0f;
    EXPECT_EQ(dt_optimizer_loss_scale(opt, &s), DT_OK);
    return s;
  }
};

TEST(LossScale, ScaledGradientsGiveTheUnscaledUpdate) {
  Model scaled(dynamic_adamw(1024.0f, 1000));
  Model plain(dynamic_adamw(1.0f, 1000));
  for (int step = 1; step <= 3; ++step) {
    fill_grads(scaled.grads, 400 + step, 1024.0f);
    fill_grads(plain.grads, 400 + step);
    const dt_optimizer_step_info info = scaled.step();
    plain.step();
    EXPECT_EQ(info.skipped, 0);
    EXPECT_EQ(info.loss_scale, 1024.0f);
    // A power-of-two scale divides out exactly, in the gradients and so in
    // the parameters.
    EXPECT_EQ(scaled.grads.bytes(), plain.grads.bytes());
    EXPECT_EQ(scaled.params.bytes(), plain.params.bytes());
  }
}

TEST(LossScale, NonFiniteGradientsSkipTheStepAndBackOff) {
  Model m(dynamic_adamw(65536.0f, 3));
  fill_grads(m.grads, 500, 65536.0f / 4);
  dt_optimizer_step_info info = m.step();
  ASSERT_EQ(info.skipped, 0);
  ASSERT_EQ(info.step, 1);

  for (float bad : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()}) {
    fill_grads(m.grads, 501, 1000.0f);
    m.grads.set(3, 777, bad);
    const auto params = m.params.bytes();
    const auto grads = m.grads.bytes();
    const float scale = m.scale();
    info = m.step();
    EXPECT_EQ(info.skipped, 1);
    EXPECT_FALSE(std::isfinite(info.grad_norm));
    EXPECT_EQ(info.step, 1);
    EXPECT_EQ(info.loss_scale, scale / 2);
    EXPECT_EQ(m.scale(), scale / 2);
    EXPECT_EQ(m.params.bytes(), params);
    EXPECT_EQ(m.grads.bytes(), grads);
  }
  EXPECT_EQ(m.scale(), 8192.0f);

  // Growth after growth_interval clean steps in a row, counted from the last
  // skipped one.
  for (int clean = 1; clean <= 7; ++clean) {
    fill_grads(m.grads, 600 + clean, 100.0f);
    info = m.step();
    EXPECT_EQ(info.skipped, 0);
    EXPECT_EQ(info.step, 1 + clean);
    EXPECT_EQ(info.loss_scale, clean < 3 ? 8192.0f : clean < 6 ? 16384.0f : 32768.0f) << clean;
  }
}

TEST(LossScale, StaticScaleStillSkipsButKeepsItsScale) {
  dt_optimizer_options opts = dynamic_adamw(128.0f, 1);
  opts.dynamic_loss_scale = 0;
  Model m(opts);
  fill_grads(m.grads, 700, 128.0f);
  m.grads.set(0, 0, std::numeric_limits<float>::quiet_NaN());
  const auto params = m.params.bytes();
  const dt_optimizer_step_info info = m.step();
  EXPECT_EQ(info.skipped, 1);
  EXPECT_EQ(info.loss_scale, 128.0f);
  EXPECT_EQ(m.params.bytes(), params);
  fill_grads(m.grads, 701, 128.0f);
  EXPECT_EQ(m.step().loss_scale, 128.0f);
}

TEST(LossScale, SgdSkipsTooWithoutAnyLossScale) {
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.kind = DT_OPTIM_SGD;
  opts.momentum = 0.9f;
  Model m(opts);
  fill_grads(m.grads, 800);
  m.grads.set(4, 2, std::numeric_limits<float>::infinity());
  const auto params = m.params.bytes();
  const dt_optimizer_step_info info = m.step();
  EXPECT_EQ(info.skipped, 1);
  EXPECT_EQ(info.step, 0);
  EXPECT_EQ(info.loss_scale, 1.0f);
  EXPECT_EQ(m.params.bytes(), params);
}

}  // namespace
}  // namespace dtrain::testing
