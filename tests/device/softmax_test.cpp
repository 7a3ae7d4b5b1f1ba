// Softmax and its backward pass against double references, on the test's
// place. Tolerances: for f32, 1e-5 relative (expf and the f32 sums err by a
// few units of 2^-24 per term); a 16-bit output adds one rounding, so a
// 16-bit test allows one unit in the last place of the output's dtype
// relative, plus the same for the inputs' rounding where they feed a sum;
// tiny probabilities may underflow f16's range (underflow()).
#include <gtest/gtest.h>

#include <string>

#include "device/kernels.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

using device::RowShape;

const std::int64_t kCols[] = {1, 7, 103, 1000};

TEST(Softmax, MatchesDoubleWithLogSumExp) {
  DT_REQUIRE_PLACE();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (std::int64_t cols : kCols) {
      const RowShape shape{5, cols};
      const std::string what = std::string(dtype_name(dtype)) + " cols " + std::to_string(cols);
      const Values x = random_values(dtype, 5 * cols, 7, -10.0, 10.0);
      PlacedTensor tx(dtype, x);
      auto ty = PlacedTensor::poisoned(dtype, x.size());
      auto lse = PlacedTensor::poisoned(DType::f32, 5);
      device::softmax(shape, tx.view(), ty.view(), lse.view());
      const SoftmaxResult want = softmax_reference(shape, x);
      const double rel = dtype == DType::f32 ? 1e-5 : epsilon(dtype);
      expect_near(ty.read(), want.y, rel, underflow(dtype), what + " y");
      expect_near(lse.read(), want.lse, 1e-6, 1e-5, what + " lse");
    }
  }
}

TEST(Softmax, InPlace) {
  DT_REQUIRE_PLACE();
  const RowShape shape{3, 50};
  const Values x = random_values(DType::f32, 150, 8, -5.0, 5.0);
  PlacedTensor t(DType::f32, x);
  auto lse = PlacedTensor::poisoned(DType::f32, 3);
  device::softmax(shape, t.view(), t.view(), lse.view());
  expect_near(t.read(), softmax_reference(shape, x).y, 1e-5, 1e-30, "in place");
}

TEST(Softmax, BackwardMatchesFiniteDifferences) {
  DT_REQUIRE_PLACE();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (std::int64_t cols : {1, 7, 103}) {
      const RowShape shape{4, cols};
      const std::string what = std::string(dtype_name(dtype)) + " cols " + std::to_string(cols);
      const Values x = random_values(DType::f64, 4 * cols, 9, -3.0, 3.0);
      const Values dy = random_values(dtype, 4 * cols, 10);
      Values y = softmax_reference(shape, x).y;
      for (double& v : y) v = stored(dtype, v);
      PlacedTensor ty(dtype, y), tdy(dtype, dy);
      auto dx = PlacedTensor::poisoned(dtype, y.size());
      device::softmax_backward(shape, ty.view(), tdy.view(), dx.view());
      const Values want =
          numeric_gradient([&](const Values& v) { return softmax_reference(shape, v).y; }, x, dy);
      // y was rounded to the dtype before the kernel saw it: its error,
      // times |dy| <= 1, bounds the extra error of each element.
      const double rel = dtype == DType::f32 ? 1e-5 : 2 * epsilon(dtype);
      expect_near(dx.read(), want, rel, rel * largest(y) * 2, what);
    }
  }
}

}  // namespace
}  // namespace dtrain::test
