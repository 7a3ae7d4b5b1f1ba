// Global gradient-norm clipping: the norm over every tensor is reported, and
// when it exceeds max_grad_norm the gradients are scaled down to it, in the
// update and in the gradient tensors.
#include <gtest/gtest.h>

#include <cmath>

#include "dtrain.h"
#include "optim/reference.hpp"
#include "optim/tensors.hpp"

namespace dtrain::testing {
namespace {

dt_optimizer_options clipped_sgd(float max_grad_norm) {
  dt_optimizer_options o = DT_OPTIMIZER_OPTIONS_INIT;
  o.kind = DT_OPTIM_SGD;
  o.lr = 0.1f;
  o.momentum = 0.9f;
  o.max_grad_norm = max_grad_norm;
  return o;
}

TEST(Clipping, LargeGradientsAreScaledToTheMaximumNorm) {
  const dt_optimizer_options opts = clipped_sgd(2.0f);
  TensorSet params(Precision::f32, odd_shapes());
  TensorSet grads(Precision::f32, odd_shapes());
  fill_params(params, 11);
  Reference reference(opts, params.values());
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), params.size(), &opts), DT_OK);

  for (int step = 1; step <= 3; ++step) {
    fill_grads(grads, 300 + step);  // ~1100 values in [-1, 1): a norm near 19
    const Values g = grads.values();
    const Reference::Step expected = reference.step(g);
    ASSERT_GT(expected.norm, 10.0);

    dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
    ASSERT_EQ(dt_optimizer_step(opt, &info), DT_OK) << dt_error_last();
    EXPECT_NEAR(info.grad_norm, expected.norm, 1e-12 * expected.norm);

    double clipped_squared = 0.0;
    for (std::size_t i = 0; i < grads.size(); ++i) {
      for (std::int64_t j = 0; j < grads.count(i); ++j) {
        const double want = expected.applied[i][j];
        EXPECT_NEAR(grads.get(i, j), want, 1e-6 * std::fabs(want) + 1e-12);
        EXPECT_NEAR(params.get(i, j), reference.params()[i][j], 1e-6 * std::fabs(reference.params()[i][j]));
        clipped_squared += double(grads.get(i, j)) * grads.get(i, j);
      }
    }
    EXPECT_NEAR(std::sqrt(clipped_squared), 2.0, 1e-5);
  }
  dt_optimizer_destroy(opt);
}

TEST(Clipping, SmallGradientsAreLeftAlone) {
  const dt_optimizer_options opts = clipped_sgd(100.0f);
  TensorSet params(Precision::f32, odd_shapes());
  TensorSet grads(Precision::f32, odd_shapes());
  fill_params(params, 12);
  fill_grads(grads, 13);
  const auto before = grads.bytes();
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), params.size(), &opts), DT_OK);
  dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
  ASSERT_EQ(dt_optimizer_step(opt, &info), DT_OK);
  EXPECT_LT(info.grad_norm, 100.0);
  EXPECT_EQ(grads.bytes(), before);
  dt_optimizer_destroy(opt);
}

TEST(Clipping, NormOfBfloat16GradientsCountsEveryTensor) {
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.max_grad_norm = 1.0f;
  TensorSet params(Precision::bf16, {{3}, {4}});
  TensorSet grads(Precision::bf16, {{3}, {4}});
  const float values[7] = {3, 0, 4, 12, 0, 0, 0};  // norm sqrt(9 + 16 + 144) = 13
  for (int k = 0; k < 7; ++k) grads.set(k < 3 ? 0 : 1, k < 3 ? k : k - 3, values[k]);
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, params.tensors(), grads.tensors(), 2, &opts), DT_OK);
  dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
  ASSERT_EQ(dt_optimizer_step(opt, &info), DT_OK);
  EXPECT_EQ(info.grad_norm, 13.0);
  EXPECT_EQ(grads.get(1, 0), round_to(Precision::bf16, static_cast<float>(12.0 / (13.0 + 1e-6))));
  dt_optimizer_destroy(opt);
}

}  // namespace
}  // namespace dtrain::testing
