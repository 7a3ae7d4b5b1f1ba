// exp_of_nonpositive against the double exponential, and its edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "device/cpu/exp.hpp"

namespace {

using dtrain::device::cpu::exp_of_nonpositive;

TEST(ExpOfNonpositive, WithinTwoUlpOfTheDoubleExponential) {
  // Every 2^-12 from -87 to 0: near zero, at the reduction's seams and
  // where the result nears the smallest normal float.
  double worst = 0;
  for (std::int64_t step = 0; step <= 87 * 4096; ++step) {
    const float x = -static_cast<float>(step) / 4096.0F;
    const double want = std::exp(static_cast<double>(x));
    const double ulp = std::nextafter(static_cast<float>(want), 1.0F) - static_cast<float>(want);
    worst = std::max(worst, std::abs(exp_of_nonpositive(x) - want) / ulp);
  }
  EXPECT_LE(worst, 2.0);
}

TEST(ExpOfNonpositive, EdgesAreExact) {
  EXPECT_EQ(exp_of_nonpositive(0.0F), 1.0F);
  EXPECT_EQ(exp_of_nonpositive(-0.0F), 1.0F);
  EXPECT_EQ(exp_of_nonpositive(-87.5F), 0.0F);
  EXPECT_EQ(exp_of_nonpositive(-1e30F), 0.0F);
  EXPECT_EQ(exp_of_nonpositive(-std::numeric_limits<float>::infinity()), 0.0F);
  EXPECT_TRUE(std::isnan(exp_of_nonpositive(std::numeric_limits<float>::quiet_NaN())));
}

// This file is compiled as block_attention.cpp is (-fno-trapping-math), so
// that this loop vectorizes as the kernel's does.
TEST(ExpOfNonpositive, ALoopOverAnArrayGivesTheSameAsOneByOne) {
  std::vector<float> xs(1000);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = -0.0871F * static_cast<float>(i);
  xs[7] = -std::numeric_limits<float>::infinity();
  xs[8] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> ys(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) ys[i] = exp_of_nonpositive(xs[i]);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    volatile float x = xs[i];  // one at a time, not in the vectorized loop
    const float one = exp_of_nonpositive(x);
    if (std::isnan(one)) {
      EXPECT_TRUE(std::isnan(ys[i])) << "x = " << xs[i];
    } else {
      EXPECT_EQ(ys[i], one) << "x = " << xs[i];
    }
  }
}

}  // namespace
