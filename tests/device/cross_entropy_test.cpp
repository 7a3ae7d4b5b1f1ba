// The vocabulary-parallel cross-entropy kernels on the test's place against
// double: a slice of a vocabulary's columns, targets inside and outside it,
// an ignored row, label smoothing, and logits of magnitude 1e4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.hpp"
#include "device/kernels.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

constexpr std::int64_t kRows = 6, kCols = 37, kFirst = 37, kVocab = 111;  // columns [37, 74) of 111
constexpr std::int64_t kIgnore = -100;
const Values kTargets = {40, 3, 73, kIgnore, 37, 100};  // inside, before, last, ignored, first, after

Values logits_with_a_large_row() {
  Values z = random_values(DType::f32, kRows * kCols, 51, -4.0, 4.0);
  for (std::int64_t j = 0; j < kCols; ++j) z[2 * kCols + j] = (j % 2 ? 1e4 : -1e4) + j;
  return z;
}

TEST(CrossEntropy, StatisticsMatchDouble) {
  DT_REQUIRE_PLACE();
  const Values z = logits_with_a_large_row();
  PlacedTensor logits(DType::f32, z), targets(DType::i64, kTargets);
  auto max = PlacedTensor::poisoned(DType::f32, kRows), sum_exp = PlacedTensor::poisoned(DType::f32, kRows),
       target = PlacedTensor::poisoned(DType::f32, kRows), sum = PlacedTensor::poisoned(DType::f32, kRows);
  device::cross_entropy_statistics({kRows, kCols}, kFirst, logits.view(), targets.view(), max.view(), sum_exp.view(),
                                   target.view(), sum.view());
  Values want_max, want_exps, want_target, want_sum;
  for (std::int64_t r = 0; r < kRows; ++r) {
    const auto row = z.begin() + r * kCols;
    const double m = *std::max_element(row, row + kCols);
    double exps = 0, total = 0;
    for (std::int64_t j = 0; j < kCols; ++j) {
      exps += std::exp(row[j] - m);
      total += row[j];
    }
    const auto column = static_cast<std::int64_t>(kTargets[r]) - kFirst;
    want_max.push_back(m);
    want_exps.push_back(exps);
    want_target.push_back(column >= 0 && column < kCols ? row[column] : 0.0);
    want_sum.push_back(total);
  }
  EXPECT_EQ(max.read(), want_max);
  EXPECT_EQ(target.read(), want_target);
  expect_near(sum_exp.read(), want_exps, 1e-5, 0, "sum_exp");
  expect_near(sum.read(), want_sum, 1e-5, 1e-5 * largest(want_sum), "sum");
}

TEST(CrossEntropy, GradientMatchesDouble) {
  DT_REQUIRE_PLACE();
  const Values z = logits_with_a_large_row();
  for (float smoothing : {0.0f, 0.1f}) {
    // The whole vocabulary's log-sum-exp: this slice's, plus a made-up rest.
    Values lse, scale = random_values(DType::f32, kRows, 52, 0.5, 2.0);
    for (std::int64_t r = 0; r < kRows; ++r) {
      const auto row = z.begin() + r * kCols;
      const double m = *std::max_element(row, row + kCols);
      double exps = 0;
      for (std::int64_t j = 0; j < kCols; ++j) exps += std::exp(row[j] - m);
      lse.push_back(stored(DType::f32, m + std::log(exps + 1.5)));
    }
    PlacedTensor logits(DType::f32, z), targets(DType::i64, kTargets), tlse(DType::f32, lse),
        tscale(DType::f32, scale);
    auto dz = PlacedTensor::poisoned(DType::f32, kRows * kCols);
    device::cross_entropy_gradient({kRows, kCols}, kFirst, kVocab, smoothing, kIgnore, logits.view(),
                                   targets.view(), tlse.view(), tscale.view(), dz.view());
    Values want;
    for (std::int64_t r = 0; r < kRows; ++r) {
      for (std::int64_t j = 0; j < kCols; ++j) {
        double g = std::exp(z[r * kCols + j] - lse[r]) - smoothing / static_cast<double>(kVocab);
        if (j == static_cast<std::int64_t>(kTargets[r]) - kFirst) g -= 1.0 - smoothing;
        want.push_back(kTargets[r] == kIgnore ? 0.0 : scale[r] * g);
      }
    }
    const Values got = dz.read();
    EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](double v) { return std::isfinite(v); }));
    expect_near(got, want, 1e-5, 1e-6, "dlogits, smoothing " + std::to_string(smoothing));
  }
}

TEST(CrossEntropy, ArgumentsAreChecked) {
  DT_REQUIRE_PLACE();
  PlacedTensor logits(DType::f32, Values(kRows * kCols, 0.0)), targets(DType::f32, Values(kRows, 0.0));
  auto out = PlacedTensor::poisoned(DType::f32, kRows);
  try {
    device::cross_entropy_statistics({kRows, kCols}, 0, logits.view(), targets.view(), out.view(), out.view(),
                                     out.view(), out.view());
    ADD_FAILURE() << "f32 targets accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("targets are float32; i32 or i64 only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtrain::test
