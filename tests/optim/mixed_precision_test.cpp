// float16 and bfloat16 parameters: the optimizer keeps f32 master weights and
// stores them rounded. The f32 kernels compute exactly what the 16-bit ones
// compute on the master, so a run over f32 parameters holding the same values
// is the master, bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include "dtrain.h"
#include "optim/reference.hpp"
#include "optim/tensors.hpp"

namespace dtrain::testing {
namespace {

struct Case {
  Precision precision;
  dt_optimizer_kind kind;
};

class MixedPrecision : public ::testing::TestWithParam<Case> {};

TEST_P(MixedPrecision, ParamsAreTheRoundedMasterWeights) {
  const Case c = GetParam();
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.kind = c.kind;
  // Steps far below half a unit in the last place of a 16-bit parameter:
  // without master weights the parameters would never move.
  // (AdamW moves each parameter by about lr per step; half a unit is 2.4e-4
  // for f16 and 9.8e-4 for bf16 at the smallest magnitude used, 0.5.)
  opts.lr = c.kind == DT_OPTIM_SGD ? 2e-4f : c.precision == Precision::f16 ? 1e-4f : 4e-4f;
  opts.momentum = c.kind == DT_OPTIM_SGD ? 0.5f : 0.0f;
  opts.weight_decay = 0.01f;

  TensorSet low(c.precision, odd_shapes());
  TensorSet low_grads(c.precision, odd_shapes());
  TensorSet wide(Precision::f32, odd_shapes());
  TensorSet wide_grads(Precision::f32, odd_shapes());
  fill_params(low, 7);
  for (std::size_t i = 0; i < low.size(); ++i) {
    for (std::int64_t j = 0; j < low.count(i); ++j) wide.set(i, j, low.get(i, j));
  }
  const Values initial = low.values();
  Reference reference(opts, initial);

  dt_optimizer *low_opt = nullptr, *wide_opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&low_opt, low.tensors(), low_grads.tensors(), low.size(), &opts), DT_OK)
      << dt_error_last();
  ASSERT_EQ(dt_optimizer_create(&wide_opt, wide.tensors(), wide_grads.tensors(), wide.size(), &opts), DT_OK);

  constexpr int kSteps = 40;
  for (int step = 1; step <= kSteps; ++step) {
    fill_grads(low_grads, 200 + step);
    for (std::size_t i = 0; i < low.size(); ++i) {
      for (std::int64_t j = 0; j < low.count(i); ++j) wide_grads.set(i, j, low_grads.get(i, j));
    }
    reference.step(low_grads.values());
    ASSERT_EQ(dt_optimizer_step(low_opt, nullptr), DT_OK);
    ASSERT_EQ(dt_optimizer_step(wide_opt, nullptr), DT_OK);
    for (std::size_t i = 0; i < low.size(); ++i) {
      for (std::int64_t j = 0; j < low.count(i); ++j) {
        ASSERT_EQ(low.get(i, j), round_to(c.precision, wide.get(i, j))) << "step " << step << " [" << i << "][" << j << "]";
      }
    }
  }

  // The masters moved the parameters, and they followed the reference to
  // within the rounding of their own dtype. (Over 40 steps the f32 masters
  // themselves drift from the float64 reference by up to about 1e-6: a
  // weight-decay term of nearly the same size every step rounds the same
  // way every step.)
  const double unit = c.precision == Precision::f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  int moved = 0;
  for (std::size_t i = 0; i < low.size(); ++i) {
    for (std::int64_t j = 0; j < low.count(i); ++j) {
      const double want = reference.params()[i][j];
      EXPECT_LE(std::fabs(wide.get(i, j) - want), 1e-5 * std::fabs(want));
      EXPECT_LE(std::fabs(low.get(i, j) - want), (unit + 1e-5) * std::fabs(want));
      moved += low.get(i, j) != initial[i][j];
    }
  }
  EXPECT_GT(moved, 20);

  dt_optimizer_destroy(low_opt);
  dt_optimizer_destroy(wide_opt);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MixedPrecision,
                         ::testing::Values(Case{Precision::bf16, DT_OPTIM_SGD}, Case{Precision::bf16, DT_OPTIM_ADAMW},
                                           Case{Precision::f16, DT_OPTIM_SGD}, Case{Precision::f16, DT_OPTIM_ADAMW}),
                         [](const auto& test) {
                           return std::string(test.param.precision == Precision::f16 ? "f16_" : "bf16_") +
                                  (test.param.kind == DT_OPTIM_SGD ? "sgd" : "adamw");
                         });

}  // namespace
}  // namespace dtrain::testing
