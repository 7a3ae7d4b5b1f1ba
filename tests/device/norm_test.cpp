// Layer norm and RMS norm, forward (y and the saved mean and rstd) and
// backward (dx, dgamma, dbeta), against a double reference and central
// differences of it, on the test's place. Tolerances are relative to the
// size of the terms each result is made of, since those terms cancel: each
// tensor's largest element, and for dx the largest rstd * |dy * gamma| (with
// one element per row, dx is a difference of two nearly equal terms of that
// size). 1e-5 of it for f32 (f32 sums of up to 1000 terms of a few units of
// 2^-24 each), and for 16-bit data two units in the last place (the
// output's rounding plus the error the rounded inputs carry through the
// sums).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "device/kernels.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

using device::RowShape;

struct NormCase {
  bool centred;
  DType dtype;
  RowShape shape;

  std::string name() const {
    return std::string(centred ? "layer_norm " : "rms_norm ") + dtype_name(dtype) + " " +
           std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
  }
};

void check(const NormCase& c) {
  const double eps = 1e-5;
  const std::int64_t rows = c.shape.rows, cols = c.shape.cols;
  const std::size_t size = static_cast<std::size_t>(rows * cols);
  // An offset mean, so that centring matters.
  const Values x = random_values(c.dtype, size, 21, -1.0, 3.0);
  const Values gamma = random_values(c.dtype, cols, 22, 0.5, 1.5);
  const Values beta = random_values(c.dtype, cols, 23);
  const Values dy = random_values(c.dtype, size, 24);
  PlacedTensor tx(c.dtype, x), tgamma(c.dtype, gamma), tbeta(c.dtype, beta), tdy(c.dtype, dy);
  auto y = PlacedTensor::poisoned(c.dtype, size);
  auto mean = PlacedTensor::poisoned(DType::f32, rows);
  auto rstd = PlacedTensor::poisoned(DType::f32, rows);
  auto dx = PlacedTensor::poisoned(c.dtype, size);
  auto dgamma = PlacedTensor::poisoned(c.dtype, cols);
  auto dbeta = PlacedTensor::poisoned(c.dtype, cols);
  if (c.centred) {
    device::layer_norm_forward(c.shape, eps, tx.view(), tgamma.view(), tbeta.view(), y.view(), mean.view(),
                               rstd.view());
    device::layer_norm_backward(c.shape, tx.view(), tgamma.view(), tdy.view(), mean.view(), rstd.view(), dx.view(),
                                dgamma.view(), dbeta.view());
  } else {
    device::rms_norm_forward(c.shape, eps, tx.view(), tgamma.view(), y.view(), rstd.view());
    device::rms_norm_backward(c.shape, tx.view(), tgamma.view(), tdy.view(), rstd.view(), dx.view(), dgamma.view());
  }
  const NormResult want = norm_reference(c.shape, eps, c.centred, x, gamma, beta);
  auto forward_of = [&](const Values& xs, const Values& gs, const Values& bs) {
    return norm_reference(c.shape, eps, c.centred, xs, gs, bs).y;
  };
  const Values want_dx = numeric_gradient([&](const Values& v) { return forward_of(v, gamma, beta); }, x, dy);
  const Values want_dgamma = numeric_gradient([&](const Values& v) { return forward_of(x, v, beta); }, gamma, dy);
  const Values want_dbeta = numeric_gradient([&](const Values& v) { return forward_of(x, gamma, v); }, beta, dy);

  const double rel = c.dtype == DType::f32 ? 1e-5 : 2 * epsilon(c.dtype);
  expect_near(y.read(), want.y, rel, rel * largest(want.y), c.name() + " y");
  expect_near(rstd.read(), want.rstd, 1e-5, 0, c.name() + " rstd");
  const double dx_terms = largest(want.rstd) * largest(dy) * largest(gamma);
  expect_near(dx.read(), want_dx, rel, rel * std::max(largest(want_dx), dx_terms), c.name() + " dx");
  expect_near(dgamma.read(), want_dgamma, rel, rel * largest(want_dgamma), c.name() + " dgamma");
  if (c.centred) {
    expect_near(mean.read(), want.mean, 1e-5, 1e-5, c.name() + " mean");
    expect_near(dbeta.read(), want_dbeta, rel, rel * largest(want_dbeta), c.name() + " dbeta");
  } else {
    // RMS norm writes neither.
    for (double v : mean.read()) EXPECT_TRUE(v != v) << c.name() << ": mean was written";
    for (double v : dbeta.read()) EXPECT_TRUE(v != v) << c.name() << ": dbeta was written";
  }
}

TEST(Norm, LayerAndRmsMatchDoubleForwardAndBackward) {
  DT_REQUIRE_PLACE();
  for (bool centred : {true, false}) {
    for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
      for (RowShape shape : {RowShape{1, 1}, RowShape{5, 7}, RowShape{7, 103}, RowShape{3, 1000}}) {
        check({centred, dtype, shape});
      }
    }
  }
}

}  // namespace
}  // namespace dtrain::test
