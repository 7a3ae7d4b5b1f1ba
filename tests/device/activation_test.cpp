// GELU (both forms) and SiLU, forward and backward, against double
// references and central differences, on the test's place. Tolerances:
// f32 within 1e-6 absolute plus 1e-5 relative (tanhf, erff and expf are
// within a few units of 2^-24; the tanh form's inner polynomial is what
// limits it near zero crossings); 16-bit within one unit in the last place
// of the dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "device/kernels.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

using device::Activation;

const char* name(Activation kind) {
  switch (kind) {
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::gelu_erf: return "gelu_erf";
    case Activation::silu: return "silu";
  }
  return "?";
}

TEST(Activation, ForwardAndBackwardMatchDouble) {
  DT_REQUIRE_PLACE();
  for (Activation kind : {Activation::gelu_tanh, Activation::gelu_erf, Activation::silu}) {
    for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
      const std::string what = std::string(name(kind)) + " " + dtype_name(dtype);
      const std::size_t count = 1003;
      const Values x = random_values(dtype, count, 11, -8.0, 8.0);
      const Values dy = random_values(dtype, count, 12);
      PlacedTensor tx(dtype, x), tdy(dtype, dy);
      auto y = PlacedTensor::poisoned(dtype, count);
      auto dx = PlacedTensor::poisoned(dtype, count);
      device::activation_forward(kind, tx.view(), y.view());
      device::activation_backward(kind, tx.view(), tdy.view(), dx.view());
      Values want_y(count);
      for (std::size_t i = 0; i < count; ++i) want_y[i] = activation_reference(kind, x[i]);
      const Values want_dx = numeric_gradient(
          [&](const Values& v) {
            Values out(v.size());
            for (std::size_t i = 0; i < v.size(); ++i) out[i] = activation_reference(kind, v[i]);
            return out;
          },
          x, dy);
      const double rel = dtype == DType::f32 ? 1e-5 : epsilon(dtype);
      const double abs = dtype == DType::f32 ? 1e-6 : epsilon(dtype) * 1e-2;
      expect_near(y.read(), want_y, rel, abs, what + " forward");
      expect_near(dx.read(), want_dx, rel, abs, what + " backward");
    }
  }
}

// Large magnitudes saturate (GELU to x or 0, SiLU to x or 0, the slopes to
// 1 or 0) with nothing infinite or NaN, as the float functions give them;
// NaN stays NaN.
TEST(Activation, ExtremeInputsSaturateAndNanStaysNan) {
  DT_REQUIRE_PLACE();
  const Values x = {1e4, -1e4, 100.0, -100.0, 30.0, -30.0, 9.5, -9.5, 1e-6, -1e-6, 0.0};
  const Values ones(x.size(), 1.0);
  for (Activation kind : {Activation::gelu_tanh, Activation::gelu_erf, Activation::silu}) {
    PlacedTensor tx(DType::f32, x), tdy(DType::f32, ones);
    auto y = PlacedTensor::poisoned(DType::f32, x.size());
    auto dx = PlacedTensor::poisoned(DType::f32, x.size());
    device::activation_forward(kind, tx.view(), y.view());
    device::activation_backward(kind, tx.view(), tdy.view(), dx.view());
    Values want_y(x.size()), want_dx(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      want_y[i] = activation_reference(kind, x[i]);
      const double h = 1e-3 * std::max(1.0, std::fabs(x[i]));
      want_dx[i] = (activation_reference(kind, x[i] + h) - activation_reference(kind, x[i] - h)) / (2 * h);
    }
    expect_near(y.read(), want_y, 1e-5, 1e-6, std::string(name(kind)) + " forward");
    expect_near(dx.read(), want_dx, 1e-4, 1e-5, std::string(name(kind)) + " backward");

    PlacedTensor nan(DType::f32, Values{std::nan("")});
    auto out = PlacedTensor::poisoned(DType::f32, 1);
    device::activation_forward(kind, nan.view(), out.view());
    EXPECT_TRUE(std::isnan(out.read()[0])) << name(kind);
  }
}

TEST(Activation, InPlace) {
  DT_REQUIRE_PLACE();
  const Values x = random_values(DType::f32, 100, 13, -4.0, 4.0);
  PlacedTensor t(DType::f32, x);
  device::activation_forward(Activation::silu, t.view(), t.view());
  Values want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = activation_reference(Activation::silu, x[i]);
  expect_near(t.read(), want, 1e-5, 1e-6, "silu in place");
}

}  // namespace
}  // namespace dtrain::test
