// The built-in expert MLPs through the C API: forward against a double
// reference written from the formulas in dtrain/moe.h, backward against
// central differences of that reference, an expert with no rows, and
// refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dtrain.h"
#include "moe/moe_reference.hpp"

namespace {

using dtrain::testing::moe::Array;
using dtrain::testing::moe::expect_close;
using dtrain::testing::moe::Numbers;
using dtrain::testing::moe::numeric_gradient;

constexpr std::int64_t kHidden = 4;  // H
constexpr std::int64_t kInner = 6;   // F
const std::vector<std::int64_t> kCounts = {2, 0, 3};  // the middle expert gets no rows
constexpr std::int64_t kRows = 5;
constexpr std::int64_t kExperts = 3;

double activate(dt_moe_activation kind, double x) {
  switch (kind) {
    case DT_MOE_GELU_TANH: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case DT_MOE_GELU_ERF: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case DT_MOE_SILU: return x / (1.0 + std::exp(-x));
  }
  return x;
}

// y for every row, expert by expert, from x [R, H], w1 [L, H, F], w2 [L, F, H].
std::vector<double> reference_forward(dt_moe_activation kind, const std::vector<double>& x,
                                      const std::vector<double>& w1, const std::vector<double>& w2) {
  std::vector<double> y(static_cast<std::size_t>(kRows * kHidden), 0.0);
  std::int64_t row = 0;
  for (std::int64_t l = 0; l < kExperts; ++l) {
    for (std::int64_t i = 0; i < kCounts[static_cast<std::size_t>(l)]; ++i, ++row) {
      for (std::int64_t f = 0; f < kInner; ++f) {
        double pre = 0.0;
        for (std::int64_t h = 0; h < kHidden; ++h) {
          pre += x[static_cast<std::size_t>(row * kHidden + h)] * w1[static_cast<std::size_t>((l * kHidden + h) * kInner + f)];
        }
        const double a = activate(kind, pre);
        for (std::int64_t h = 0; h < kHidden; ++h) {
          y[static_cast<std::size_t>(row * kHidden + h)] += a * w2[static_cast<std::size_t>((l * kInner + f) * kHidden + h)];
        }
      }
    }
  }
  return y;
}

class MoeExperts : public ::testing::TestWithParam<dt_moe_activation> {};

TEST_P(MoeExperts, ForwardAndBackwardEqualTheReference) {
  const dt_moe_activation kind = GetParam();
  const std::vector<double> x = Numbers(41).take(kRows * kHidden);
  const std::vector<double> w1 = Numbers(42).take(kExperts * kHidden * kInner);
  const std::vector<double> w2 = Numbers(43).take(kExperts * kInner * kHidden);
  const std::vector<double> dy = Numbers(44).take(kRows * kHidden);

  Array<float> tx({kRows, kHidden}, x);
  Array<std::int64_t> counts({kExperts}, kCounts);
  Array<float> tw1({kExperts, kHidden, kInner}, w1);
  Array<float> tw2({kExperts, kInner, kHidden}, w2);
  Array<float> hidden({kRows, kInner});
  Array<float> y({kRows, kHidden});
  ASSERT_EQ(dt_moe_experts_forward(&tx, &counts, &tw1, &tw2, kind, &hidden, &y), DT_OK) << dt_error_last();
  expect_close(y.values, reference_forward(kind, x, w1, w2), 1e-5, "y");

  Array<float> tdy({kRows, kHidden}, dy);
  Array<float> dx({kRows, kHidden}, 9.0f);
  Array<float> dw1({kExperts, kHidden, kInner}, 9.0f);
  Array<float> dw2({kExperts, kInner, kHidden}, 9.0f);
  ASSERT_EQ(dt_moe_experts_backward(&tx, &counts, &tw1, &tw2, kind, &hidden, &tdy, &dx, &dw1, &dw2), DT_OK)
      << dt_error_last();
  auto loss = [&](const std::vector<double>& xs, const std::vector<double>& w1s, const std::vector<double>& w2s) {
    const std::vector<double> out = reference_forward(kind, xs, w1s, w2s);
    double sum = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i) sum += dy[i] * out[i];
    return sum;
  };
  expect_close(dx.values, numeric_gradient([&](const std::vector<double>& v) { return loss(v, w1, w2); }, x), 1e-4,
               "dx");
  expect_close(dw1.values, numeric_gradient([&](const std::vector<double>& v) { return loss(x, v, w2); }, w1), 1e-4,
               "dw1");
  expect_close(dw2.values, numeric_gradient([&](const std::vector<double>& v) { return loss(x, w1, v); }, w2), 1e-4,
               "dw2");
}

INSTANTIATE_TEST_SUITE_P(Activations, MoeExperts, ::testing::Values(DT_MOE_GELU_TANH, DT_MOE_GELU_ERF, DT_MOE_SILU));

TEST(MoeExpertsRefusal, BadShapesCountsAndActivationsAreRefused) {
  Array<float> x({kRows, kHidden});
  Array<std::int64_t> counts({kExperts}, kCounts);
  Array<float> w1({kExperts, kHidden, kInner});
  Array<float> w2({kExperts, kInner, kHidden});
  Array<float> hidden({kRows, kInner});
  Array<float> y({kRows, kHidden}, -1.0f);
  auto forward = [&](DLTensor* c, DLTensor* a, DLTensor* b, int kind) {
    return dt_moe_experts_forward(&x, c, a, b, static_cast<dt_moe_activation>(kind), &hidden, &y);
  };
  EXPECT_EQ(forward(&counts, &w1, &w2, 3), DT_ERR_INVALID_ARGUMENT);
  Array<std::int64_t> short_counts({kExperts}, std::vector<std::int64_t>{2, 0, 2});
  EXPECT_EQ(forward(&short_counts, &w1, &w2, DT_MOE_SILU), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("add up"), std::string::npos) << dt_error_last();
  Array<std::int64_t> negative({kExperts}, std::vector<std::int64_t>{6, -1, 0});
  EXPECT_EQ(forward(&negative, &w1, &w2, DT_MOE_SILU), DT_ERR_INVALID_ARGUMENT);
  Array<float> w1_wrong({kExperts, kHidden + 1, kInner});
  EXPECT_EQ(forward(&counts, &w1_wrong, &w2, DT_MOE_SILU), DT_ERR_INVALID_ARGUMENT);
  Array<float> w2_two_experts({2, kInner, kHidden});
  EXPECT_EQ(forward(&counts, &w1, &w2_two_experts, DT_MOE_SILU), DT_ERR_INVALID_ARGUMENT);
  Array<double> w1_f64({kExperts, kHidden, kInner});
  EXPECT_EQ(forward(&counts, &w1_f64.tensor, &w2, DT_MOE_SILU), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(forward(nullptr, &w1, &w2, DT_MOE_SILU), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_experts_forward(&x, &counts, &w1, &w2, DT_MOE_SILU, &hidden, &x), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(y.values, std::vector<float>(kRows * kHidden, -1.0f));
  Array<float> dw1({kExperts, kHidden, kInner});
  Array<float> dw2({kExperts, kInner, kHidden});
  EXPECT_EQ(dt_moe_experts_backward(&x, &counts, &w1, &w2, DT_MOE_SILU, &hidden, &y, &y, &dw1, &dw2),
            DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
