// SGD and AdamW through the C API, against the float64 reference, for
// several steps over tensors of odd sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dtrain.h"
#include "optim/reference.hpp"
#include "optim/tensors.hpp"

namespace dtrain::testing {
namespace {

constexpr int kSteps = 6;
constexpr double kTolerance = 1e-6;  // relative, for f32 parameters

struct Case {
  std::string name;
  dt_optimizer_options opts;
};

dt_optimizer_options sgd(float momentum, float dampening, int nesterov, float weight_decay) {
  dt_optimizer_options o = DT_OPTIMIZER_OPTIONS_INIT;
  o.kind = DT_OPTIM_SGD;
  o.lr = 0.01f;
  o.momentum = momentum;
  o.dampening = dampening;
  o.nesterov = nesterov;
  o.weight_decay = weight_decay;
  return o;
}

dt_optimizer_options adamw(float weight_decay, float beta1) {
  dt_optimizer_options o = DT_OPTIMIZER_OPTIONS_INIT;
  o.kind = DT_OPTIM_ADAMW;
  o.lr = 0.01f;
  o.weight_decay = weight_decay;
  o.beta1 = beta1;
  return o;
}

class Update : public ::testing::TestWithParam<Case> {};

TEST_P(Update, MatchesTheFloat64Reference) {
  const dt_optimizer_options opts = GetParam().opts;
  TensorSet params(Precision::f32, odd_shapes());
  TensorSet grads(Precision::f32, odd_shapes());
  fill_params(params, 1);
  Reference reference(opts, params.values());

  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), params.size(), &opts), DT_OK)
      << dt_error_last();
  for (int step = 1; step <= kSteps; ++step) {
    fill_grads(grads, 100 + step);
    const Values g = grads.values();
    dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
    ASSERT_EQ(dt_optimizer_step(opt, &info), DT_OK) << dt_error_last();
    const Reference::Step expected = reference.step(g);
    EXPECT_EQ(info.skipped, 0);
    EXPECT_EQ(info.step, step);
    EXPECT_EQ(info.loss_scale, 1.0f);
    EXPECT_NEAR(info.grad_norm, expected.norm, 1e-12 * expected.norm);

    double worst = 0.0;
    for (std::size_t i = 0; i < params.size(); ++i) {
      for (std::int64_t j = 0; j < params.count(i); ++j) {
        const double want = reference.params()[i][j];
        worst = std::max(worst, std::fabs(params.get(i, j) - want) / std::fabs(want));
      }
    }
    EXPECT_LE(worst, kTolerance) << "step " << step;
    // Without loss scaling or clipping the gradients are left as they were.
    EXPECT_EQ(grads.values(), g);
  }
  EXPECT_EQ(dt_optimizer_destroy(opt), DT_OK);
}

INSTANTIATE_TEST_SUITE_P(
    Optimizers, Update,
    ::testing::Values(Case{"sgd", sgd(0.0f, 0.0f, 0, 0.0f)},
                      Case{"sgd_weight_decay", sgd(0.0f, 0.0f, 0, 0.1f)},
                      Case{"sgd_momentum", sgd(0.9f, 0.0f, 0, 0.0f)},
                      Case{"sgd_momentum_dampening", sgd(0.9f, 0.3f, 0, 0.01f)},
                      Case{"sgd_nesterov", sgd(0.9f, 0.0f, 1, 0.0f)},
                      Case{"sgd_nesterov_weight_decay", sgd(0.8f, 0.0f, 1, 0.05f)},
                      Case{"adamw", adamw(0.0f, 0.9f)},
                      Case{"adamw_weight_decay", adamw(0.1f, 0.9f)},
                      Case{"adamw_beta1_zero", adamw(0.01f, 0.0f)}),
    [](const auto& test) { return test.param.name; });

TEST(Update, SetLrAppliesToTheNextStep) {
  dt_optimizer_options opts = sgd(0.0f, 0.0f, 0, 0.0f);
  TensorSet params(Precision::f32, {{4}});
  TensorSet grads(Precision::f32, {{4}});
  for (int j = 0; j < 4; ++j) {
    params.set(0, j, 1.0f);
    grads.set(0, j, 1.0f);
  }
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), 1, &opts), DT_OK);
  float lr = 0.0f;
  ASSERT_EQ(dt_optimizer_lr(opt, &lr), DT_OK);
  EXPECT_EQ(lr, 0.01f);
  ASSERT_EQ(dt_optimizer_set_lr(opt, 0.25f), DT_OK);
  ASSERT_EQ(dt_optimizer_lr(opt, &lr), DT_OK);
  EXPECT_EQ(lr, 0.25f);
  ASSERT_EQ(dt_optimizer_step(opt, nullptr), DT_OK);
  EXPECT_EQ(params.get(0, 3), 0.75f);
  dt_optimizer_destroy(opt);
}

TEST(Update, ZeroGradClearsEveryGradient) {
  TensorSet params(Precision::bf16, odd_shapes());
  TensorSet grads(Precision::bf16, odd_shapes());
  fill_params(params, 3);
  fill_grads(grads, 4);
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), params.size(), nullptr), DT_OK);
  const auto before = params.bytes();
  ASSERT_EQ(dt_optimizer_zero_grad(opt), DT_OK);
  for (const auto& g : grads.values()) {
    for (double x : g) EXPECT_EQ(x, 0.0);
  }
  EXPECT_EQ(params.bytes(), before);
  dt_optimizer_destroy(opt);
}

TEST(Update, ZeroSizedTensorsAreCarriedAlong) {
  dt_optimizer_options opts = adamw(0.1f, 0.9f);
  TensorSet params(Precision::f32, {{0}, {3}, {2, 0}});
  TensorSet grads(Precision::f32, {{0}, {3}, {2, 0}});
  fill_params(params, 5);
  fill_grads(grads, 6);
  Reference reference(opts, params.values());
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), params.size(), &opts), DT_OK)
      << dt_error_last();
  const Values g = grads.values();
  ASSERT_EQ(dt_optimizer_step(opt, nullptr), DT_OK);
  reference.step(g);
  for (std::int64_t j = 0; j < 3; ++j) EXPECT_NEAR(params.get(1, j), reference.params()[1][j], 1e-6);
  dt_optimizer_destroy(opt);
}

}  // namespace
}  // namespace dtrain::testing
