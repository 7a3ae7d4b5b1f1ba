// The layer kernels refuse bad operands before running anything, with
// DT_ERR_INVALID_ARGUMENT (DT_ERR_UNSUPPORTED for a dtype no kernel has) and
// a message naming the operand; the outputs keep their values.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "base/error.hpp"
#include "device/kernels.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

using device::RowShape;

void expect_refused(const std::function<void()>& call, dt_status status, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error saying '" << words << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(KernelArguments, AreCheckedFirst) {
  DT_REQUIRE_PLACE();
  PlacedTensor x(DType::f32, Values(12, 1.0)), y(DType::f32, Values(12, 5.0));
  PlacedTensor short_y(DType::f32, Values(11, 5.0)), y16(DType::bf16, Values(12, 5.0));
  PlacedTensor lse(DType::f32, Values(3, 5.0)), lse16(DType::f16, Values(3, 5.0));
  PlacedTensor xi(DType::i32, Values(12, 1.0)), indices(DType::i64, Values(3, 5.0));
  const RowShape shape{3, 4};
  const dt_status invalid = DT_ERR_INVALID_ARGUMENT;
  expect_refused([&] { device::softmax(shape, x.view(), short_y.view(), lse.view()); }, invalid,
                 "y holds 11 elements, not 12");
  expect_refused([&] { device::softmax(shape, x.view(), y16.view(), lse.view()); }, invalid, "y is bfloat16");
  expect_refused([&] { device::softmax(shape, x.view(), y.view(), lse16.view()); }, invalid, "lse is float16");
  expect_refused([&] { device::softmax({-1, 4}, x.view(), y.view(), lse.view()); }, invalid, "must not be negative");
  expect_refused([&] { device::softmax(shape, xi.view(), y.view(), lse.view()); }, DT_ERR_UNSUPPORTED,
                 "x is int32");
  expect_refused([&] { device::top_k(shape, 5, x.view(), y.view(), indices.view()); }, invalid, "k = 5");
  expect_refused([&] { device::top_k(shape, 1, x.view(), lse.view(), lse.view()); }, invalid, "indices is float32");
  expect_refused([&] { device::activation_backward(device::Activation::silu, x.view(), short_y.view(), y.view()); },
                 invalid, "dy holds 11");
  expect_refused([&] { device::rms_norm_forward({12, 0}, 1e-5f, x.view(), x.view(), y.view(), lse.view()); },
                 invalid, "0 columns");
  expect_refused([&] { device::rms_norm_forward(shape, 0.0f, x.view(), lse.view(), y.view(), lse.view()); },
                 invalid, "eps");
  expect_refused([&] { device::gather_rows(5, x.view(), indices.view(), y.view()); }, invalid,
                 "not whole rows of 5");
  expect_refused([&] { device::gather_rows(4, x.view(), lse.view(), y.view()); }, invalid, "indices are float32");
  EXPECT_EQ(y.read(), Values(12, 5.0));
  EXPECT_EQ(lse.read(), Values(3, 5.0));
}

}  // namespace
}  // namespace dtrain::test
