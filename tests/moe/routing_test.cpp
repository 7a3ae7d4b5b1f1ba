// The local MoE calls through the C API: top-k routing, its capacity limit
// and backward pass, and the auxiliary losses, each against the double
// reference of moe_reference.hpp (numerical gradients for the backward
// passes), and their refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/cuda_device.hpp"
#include "dtrain.h"
#include "moe/moe_reference.hpp"

namespace {

using dtrain::testing::moe::Array;
using dtrain::testing::moe::expect_close;
using dtrain::testing::moe::Numbers;
using dtrain::testing::moe::numeric_gradient;
using dtrain::testing::moe::route_reference;
using dtrain::testing::moe::RouterSpec;
using dtrain::testing::moe::scores_of;
using dtrain::testing::moe::weights_of;

constexpr double kTolerance = 1e-5;
constexpr double kGradientTolerance = 1e-4;  // float gradients against central differences

std::vector<RouterSpec> specs() {
  std::vector<RouterSpec> all;
  for (int experts : {4, 8}) {
    for (int k : {1, 2}) {
      for (auto scoring : {DT_MOE_SOFTMAX, DT_MOE_SIGMOID}) {
        for (bool normalize : {false, true}) {
          for (double factor : {0.0, 1.0, 0.75}) {
            for (auto drop : {DT_MOE_DROP_BY_POSITION, DT_MOE_DROP_BY_SCORE}) {
              if (factor <= 0 && drop == DT_MOE_DROP_BY_SCORE) continue;
              all.push_back({experts, k, scoring, normalize, factor, drop});
            }
          }
        }
      }
    }
  }
  return all;
}

std::string describe(const RouterSpec& s) {
  return "E=" + std::to_string(s.experts) + " k=" + std::to_string(s.k) +
         (s.scoring == DT_MOE_SIGMOID ? " sigmoid" : " softmax") + (s.normalize ? " normalized" : "") +
         " capacity " + std::to_string(s.capacity_factor) + (s.drop == DT_MOE_DROP_BY_SCORE ? " by score" : "");
}

TEST(MoeRouting, RouteEqualsReference) {
  constexpr std::int64_t kTokens = 13;
  for (const RouterSpec& spec : specs()) {
    SCOPED_TRACE(describe(spec));
    const std::vector<double> logits = Numbers(7).take(static_cast<std::size_t>(kTokens * spec.experts), 2.0);
    Array<float> x({kTokens, spec.experts}, logits);
    Array<float> weights({kTokens, spec.k});
    Array<std::int64_t> experts({kTokens, spec.k});
    std::int64_t dropped = -7;
    const dt_moe_options opts = spec.options();
    ASSERT_EQ(dt_moe_route(&x, &opts, &weights, &experts, &dropped), DT_OK) << dt_error_last();
    const auto expected = route_reference(spec, logits, kTokens);
    expect_close(weights.values, expected.weights, kTolerance, "weights");
    EXPECT_EQ(experts.values, expected.experts);
    EXPECT_EQ(dropped, expected.dropped);
    if (spec.capacity_factor <= 0) {
      EXPECT_EQ(dropped, 0);
    }
  }
}

TEST(MoeRouting, CapacityDropsLaterTokensOrLowerScores) {
  // Four tokens all prefer expert 0, with rising scores; capacity
  // ceil(1.0 * 4 * 1 / 2) = 2.
  Array<float> x({4, 2}, std::vector<float>{1, 0, 2, 0, 3, 0, 4, 0});
  Array<float> weights({4, 1});
  Array<std::int64_t> experts({4, 1});
  RouterSpec spec{2, 1, DT_MOE_SOFTMAX, false, 1.0, DT_MOE_DROP_BY_POSITION};
  dt_moe_options opts = spec.options();
  std::int64_t dropped = 0;
  ASSERT_EQ(dt_moe_route(&x, &opts, &weights, &experts, &dropped), DT_OK) << dt_error_last();
  EXPECT_EQ(experts.values, (std::vector<std::int64_t>{0, 0, -1, -1}));
  EXPECT_EQ(dropped, 2);
  opts.drop_policy = DT_MOE_DROP_BY_SCORE;
  ASSERT_EQ(dt_moe_route(&x, &opts, &weights, &experts, &dropped), DT_OK) << dt_error_last();
  EXPECT_EQ(experts.values, (std::vector<std::int64_t>{-1, -1, 0, 0}));
  EXPECT_EQ(dropped, 2);
  // A dropped pair keeps its weight.
  EXPECT_NEAR(weights[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
}

TEST(MoeRouting, RouteBackwardEqualsNumericalGradient) {
  constexpr std::int64_t kTokens = 6;
  for (const RouterSpec& spec : specs()) {
    if (spec.capacity_factor > 0) continue;  // the capacity does not change the weights
    SCOPED_TRACE(describe(spec));
    const std::vector<double> logits = Numbers(11).take(static_cast<std::size_t>(kTokens * spec.experts), 2.0);
    const std::vector<double> d_weights = Numbers(12).take(static_cast<std::size_t>(kTokens * spec.k));
    const auto routed = route_reference(spec, logits, kTokens);
    // sum over pairs of d_weights * weights, the top-k choice held fixed.
    auto objective = [&](const std::vector<double>& l) {
      double sum = 0.0;
      for (std::int64_t t = 0; t < kTokens; ++t) {
        const std::vector<int> chosen(routed.chosen.begin() + t * spec.k, routed.chosen.begin() + (t + 1) * spec.k);
        const auto w = weights_of(spec, &l[static_cast<std::size_t>(t * spec.experts)], chosen);
        for (int j = 0; j < spec.k; ++j) sum += d_weights[static_cast<std::size_t>(t * spec.k + j)] * w[j];
      }
      return sum;
    };
    Array<float> x({kTokens, spec.experts}, logits);
    Array<float> dw({kTokens, spec.k}, d_weights);
    Array<float> dx({kTokens, spec.experts}, 99.0f);
    const dt_moe_options opts = spec.options();
    ASSERT_EQ(dt_moe_route_backward(&x, &dw, &opts, &dx), DT_OK) << dt_error_last();
    expect_close(dx.values, numeric_gradient(objective, logits), kGradientTolerance, "d_logits");
  }
}

// The probabilities P is averaged from: softmax, or sigmoid scores over their sum.
std::vector<double> balance_probabilities(const RouterSpec& spec, const double* logits) {
  std::vector<double> p = scores_of(spec, logits);
  double sum = 0.0;
  for (double v : p) sum += v;
  if (spec.scoring == DT_MOE_SIGMOID) {
    for (double& v : p) v /= sum;
  }
  return p;
}

TEST(MoeAuxLoss, BalanceLossEqualsSwitchFormula) {
  constexpr std::int64_t kTokens = 9;
  constexpr double kCoeff = 0.25;
  for (const RouterSpec& spec : specs()) {
    if (spec.capacity_factor > 0 || spec.normalize) continue;  // neither enters the loss
    SCOPED_TRACE(describe(spec));
    const std::vector<double> logits = Numbers(21).take(static_cast<std::size_t>(kTokens * spec.experts), 2.0);
    const auto routed = route_reference(spec, logits, kTokens);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(spec.experts), 0);
    for (int e : routed.chosen) ++counts[static_cast<std::size_t>(e)];
    auto loss_of = [&](const std::vector<double>& l) {
      double loss = 0.0;
      for (int e = 0; e < spec.experts; ++e) {
        double mean_p = 0.0;
        for (std::int64_t t = 0; t < kTokens; ++t) {
          mean_p += balance_probabilities(spec, &l[static_cast<std::size_t>(t * spec.experts)])[e] / kTokens;
        }
        const double f = static_cast<double>(counts[static_cast<std::size_t>(e)]) / (kTokens * spec.k);
        loss += spec.experts * f * mean_p;
      }
      return loss;
    };
    Array<float> x({kTokens, spec.experts}, logits);
    Array<std::int64_t> got_counts({spec.experts});
    Array<float> dx({kTokens, spec.experts}, 1.0f);  // the gradient is added to what is there
    double loss = 0.0;
    const dt_moe_options opts = spec.options();
    ASSERT_EQ(dt_moe_balance_loss(&x, &opts, kCoeff, &loss, &got_counts, &dx), DT_OK) << dt_error_last();
    EXPECT_NEAR(loss, loss_of(logits), kTolerance * loss_of(logits));
    EXPECT_EQ(got_counts.values, counts);
    std::vector<double> expected = numeric_gradient(loss_of, logits);
    for (double& g : expected) g = 1.0 + kCoeff * g;
    expect_close(dx.values, expected, kTolerance, "d_logits");
  }
}

TEST(MoeAuxLoss, BalanceLossIsOneForAUniformRouterOnBalancedExperts) {
  // Token t prefers expert t % 4 by a margin so small that P stays uniform.
  constexpr int kExperts = 4;
  std::vector<float> logits(8 * kExperts, 0.0f);
  for (int t = 0; t < 8; ++t) logits[static_cast<std::size_t>(t * kExperts + t % kExperts)] = 1e-6f;
  Array<float> x({8, kExperts}, logits);
  const dt_moe_options opts = RouterSpec{kExperts, 1}.options();
  double loss = 0.0;
  ASSERT_EQ(dt_moe_balance_loss(&x, &opts, 1.0, &loss, nullptr, nullptr), DT_OK) << dt_error_last();
  EXPECT_NEAR(loss, 1.0, 1e-5);
}

TEST(MoeAuxLoss, ZLossEqualsStMoeFormula) {
  constexpr std::int64_t kTokens = 5;
  constexpr int kExperts = 6;
  constexpr double kCoeff = 0.5;
  const std::vector<double> logits = Numbers(31).take(kTokens * kExperts, 3.0);
  auto loss_of = [&](const std::vector<double>& l) {
    double sum = 0.0;
    for (std::int64_t t = 0; t < kTokens; ++t) {
      double s = 0.0;
      for (int e = 0; e < kExperts; ++e) s += std::exp(l[static_cast<std::size_t>(t * kExperts + e)]);
      sum += std::log(s) * std::log(s);
    }
    return sum / kTokens;
  };
  Array<float> x({kTokens, kExperts}, logits);
  Array<float> dx({kTokens, kExperts}, -2.0f);
  double loss = 0.0;
  ASSERT_EQ(dt_moe_z_loss(&x, kCoeff, &loss, &dx), DT_OK) << dt_error_last();
  EXPECT_NEAR(loss, loss_of(logits), kTolerance * loss_of(logits));
  std::vector<double> expected = numeric_gradient(loss_of, logits);
  for (double& g : expected) g = -2.0 + kCoeff * g;
  expect_close(dx.values, expected, kTolerance, "d_logits");
}

TEST(MoeRouting, NoTokensRouteToNothing) {
  Array<float> x({0, 4});
  Array<float> weights({0, 2});
  Array<std::int64_t> experts({0, 2});
  Array<std::int64_t> counts({4}, 5);
  Array<float> dx({0, 4});
  const dt_moe_options opts = RouterSpec{4, 2, DT_MOE_SOFTMAX, true, 1.0}.options();
  std::int64_t dropped = -1;
  double loss = -1.0;
  ASSERT_EQ(dt_moe_route(&x, &opts, &weights, &experts, &dropped), DT_OK) << dt_error_last();
  EXPECT_EQ(dropped, 0);
  ASSERT_EQ(dt_moe_route_backward(&x, &weights, &opts, &dx), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_moe_balance_loss(&x, &opts, 1.0, &loss, &counts, &dx), DT_OK) << dt_error_last();
  EXPECT_EQ(loss, 0.0);
  EXPECT_EQ(counts.values, std::vector<std::int64_t>(4, 0));
  ASSERT_EQ(dt_moe_z_loss(&x, 1.0, &loss, &dx), DT_OK) << dt_error_last();
  EXPECT_EQ(loss, 0.0);
}

TEST(MoeRouting, OptionsInitGivesTheDefaults) {
  dt_moe_options opts;
  ASSERT_EQ(dt_moe_options_init(&opts, DT_MOE_OPTIONS_VERSION), DT_OK);
  EXPECT_EQ(opts.version, DT_MOE_OPTIONS_VERSION);
  EXPECT_EQ(opts.num_experts, DT_UNDEF);
  EXPECT_EQ(opts.top_k, DT_UNDEF);
  EXPECT_EQ(opts.scoring, DT_MOE_SOFTMAX);
  EXPECT_EQ(opts.normalize, 0);
  EXPECT_EQ(opts.capacity_factor, 0.0);
  EXPECT_EQ(opts.drop_policy, DT_MOE_DROP_BY_POSITION);
  // DT_UNDEF in the optional fields means their defaults.
  Array<float> x({2, 3}, std::vector<float>{0, 1, 2, 2, 1, 0});
  Array<float> weights({2, 1});
  Array<std::int64_t> experts({2, 1});
  opts.num_experts = 3;
  opts.top_k = 1;
  opts.scoring = static_cast<dt_moe_scoring>(DT_UNDEF);
  opts.normalize = DT_UNDEF;
  opts.drop_policy = static_cast<dt_moe_drop_policy>(DT_UNDEF);
  ASSERT_EQ(dt_moe_route(&x, &opts, &weights, &experts, nullptr), DT_OK) << dt_error_last();
  EXPECT_EQ(experts.values, (std::vector<std::int64_t>{2, 0}));
  EXPECT_NEAR(weights[0], std::exp(2.0) / (1.0 + std::exp(1.0) + std::exp(2.0)), 1e-6);  // softmax, not renormalised
  EXPECT_EQ(dt_moe_options_init(&opts, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_options_init(&opts, DT_MOE_OPTIONS_VERSION + 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_options_init(nullptr, DT_MOE_OPTIONS_VERSION), DT_ERR_INVALID_ARGUMENT);
}

TEST(MoeRouting, BadArgumentsAreRefusedAndNothingIsWritten) {
  Array<float> x({3, 4}, 0.5f);
  Array<float> weights({3, 2}, -1.0f);
  Array<std::int64_t> experts({3, 2}, -5);
  const dt_moe_options good = RouterSpec{4, 2}.options();
  auto route = [&](const dt_moe_options& opts) { return dt_moe_route(&x, &opts, &weights, &experts, nullptr); };

  EXPECT_EQ(dt_moe_route(nullptr, &good, &weights, &experts, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_route(&x, nullptr, &weights, &experts, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_route(&x, &good, nullptr, &experts, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_route(&x, &good, &weights, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  dt_moe_options opts = good;
  opts.num_experts = DT_UNDEF;
  EXPECT_EQ(route(opts), DT_ERR_INVALID_ARGUMENT);
  opts = good;
  opts.top_k = 5;
  EXPECT_EQ(route(opts), DT_ERR_INVALID_ARGUMENT);
  opts.top_k = 0;
  EXPECT_EQ(route(opts), DT_ERR_INVALID_ARGUMENT);
  opts = good;
  opts.scoring = static_cast<dt_moe_scoring>(2);
  EXPECT_EQ(route(opts), DT_ERR_INVALID_ARGUMENT);
  opts = good;
  opts.drop_policy = static_cast<dt_moe_drop_policy>(7);
  EXPECT_EQ(route(opts), DT_ERR_INVALID_ARGUMENT);
  opts = good;
  opts.version = 2;
  EXPECT_EQ(route(opts), DT_ERR_INVALID_ARGUMENT);
  opts = good;
  opts.num_experts = 5;  // logits have 4 columns
  EXPECT_EQ(route(opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("logits"), std::string::npos) << dt_error_last();

  Array<float> short_weights({2, 2});
  EXPECT_EQ(dt_moe_route(&x, &good, &short_weights, &experts, nullptr), DT_ERR_INVALID_ARGUMENT);
  Array<float> flat_logits({12});
  EXPECT_EQ(dt_moe_route(&flat_logits, &good, &weights, &experts, nullptr), DT_ERR_INVALID_ARGUMENT);
  Array<double> f64_logits({3, 4});
  EXPECT_EQ(dt_moe_route(&f64_logits, &good, &weights, &experts, nullptr), DT_ERR_UNSUPPORTED);
  Array<std::int32_t> i32_experts({3, 2});
  EXPECT_EQ(dt_moe_route(&x, &good, &weights, &i32_experts, nullptr), DT_ERR_INVALID_ARGUMENT);
  if (!dtrain::testing::cuda_device_present()) {  // with a device, host memory labelled kDLCUDA would be handed to it
    x.tensor.device = {kDLCUDA, 0};
    EXPECT_EQ(route(good), DT_ERR_UNSUPPORTED);
    x.tensor.device = {kDLCPU, 0};
  }
  // The same memory as input and output.
  EXPECT_EQ(dt_moe_route_backward(&x, &weights, &good, &x), DT_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(weights.values, std::vector<float>(6, -1.0f));
  EXPECT_EQ(experts.values, std::vector<std::int64_t>(6, -5));

  Array<float> dx({3, 4});
  EXPECT_EQ(dt_moe_route_backward(&x, &weights, &good, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_balance_loss(&x, &good, 1.0, nullptr, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  double loss = 0.0;
  Array<std::int64_t> counts({3});
  EXPECT_EQ(dt_moe_balance_loss(&x, &good, 1.0, &loss, &counts, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_z_loss(nullptr, 1.0, &loss, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_moe_z_loss(&x, 1.0, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  Array<float> wrong_dx({4, 3});
  EXPECT_EQ(dt_moe_z_loss(&x, 1.0, &loss, &wrong_dx), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
