// Bad input through the C API: the documented status, a message naming the
// problem, and nothing changed.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "common/cuda_device.hpp"
#include "dtrain.h"
#include "optim/tensors.hpp"

namespace dtrain::testing {
namespace {

dt_optimizer* const kUntouched = reinterpret_cast<dt_optimizer*>(0x5eed);

struct Inputs {
  TensorSet params{Precision::f32, {{4}, {2, 3}}};
  TensorSet grads{Precision::f32, {{4}, {2, 3}}};
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  Inputs() {
    fill_params(params, 1);
    fill_grads(grads, 2);
  }
};

// Creates from `in` and expects `status`, a message containing `needle`,
// `out` untouched and every tensor as it was.
void expect_refused(Inputs& in, dt_status status, const std::string& needle, std::size_t n = 2) {
  const auto params = in.params.bytes();
  const auto grads = in.grads.bytes();
  dt_optimizer* out = kUntouched;
  EXPECT_EQ(dt_optimizer_create(&out, in.params.tensors(), in.grads.tensors(), n, &in.opts), status);
  EXPECT_NE(std::string(dt_error_last()).find(needle), std::string::npos) << dt_error_last();
  EXPECT_EQ(out, kUntouched);
  EXPECT_EQ(in.params.bytes(), params);
  EXPECT_EQ(in.grads.bytes(), grads);
}

TEST(BadInput, NullArguments) {
  Inputs in;
  EXPECT_EQ(dt_optimizer_create(nullptr, in.params.tensors(), in.grads.tensors(), 2, nullptr),
            DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  dt_optimizer* out = kUntouched;
  EXPECT_EQ(dt_optimizer_create(&out, nullptr, in.grads.tensors(), 2, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "params is NULL");
  EXPECT_EQ(dt_optimizer_create(&out, in.params.tensors(), nullptr, 2, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "grads is NULL");
  EXPECT_EQ(out, kUntouched);

  float value = 0.0f;
  EXPECT_EQ(dt_optimizer_step(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_optimizer_zero_grad(nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_optimizer_set_lr(nullptr, 0.1f), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_optimizer_lr(nullptr, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_optimizer_loss_scale(nullptr, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "opt is NULL");
  EXPECT_EQ(dt_optimizer_destroy(nullptr), DT_OK);
  EXPECT_EQ(dt_optimizer_options_init(nullptr, DT_OPTIMIZER_OPTIONS_VERSION), DT_ERR_INVALID_ARGUMENT);

  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, in.params.tensors(), in.grads.tensors(), 2, nullptr), DT_OK);
  EXPECT_EQ(dt_optimizer_lr(opt, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_optimizer_loss_scale(opt, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  dt_optimizer_destroy(opt);
}

TEST(BadInput, NoTensors) {
  Inputs in;
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "n is 0", 0);
}

TEST(BadInput, MismatchedShapes) {
  Inputs in;
  in.grads.tensor(1).shape[1] = 2;
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "grads[1]: shape (2, 2) differs from its parameter's, (2, 3)");
  in.grads.tensor(1).shape[1] = 3;
  in.grads.tensor(1).ndim = 1;
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "grads[1]: shape (2,) differs");
}

TEST(BadInput, MismatchedDtypes) {
  Inputs in;
  in.grads.tensor(0).dtype = {kDLFloat, 16, 1};
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "grads[0]: dtype float16 differs from its parameter's, float32");
}

TEST(BadInput, UnsupportedParameterDtypes) {
  Inputs in;
  for (DLDataType dtype : {DLDataType{kDLInt, 32, 1}, DLDataType{kDLFloat, 64, 1}, DLDataType{kDLUInt, 8, 1}}) {
    in.params.tensor(1).dtype = dtype;
    in.grads.tensor(1).dtype = dtype;
    expect_refused(in, DT_ERR_INVALID_ARGUMENT, "cannot be optimized (float32, float16, bfloat16)");
  }
  in.params.tensor(1).dtype = {kDLFloat, 32, 2};
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "params[1]: dtype float32x2 is not supported");
}

TEST(BadInput, MalformedTensors) {
  Inputs in;
  in.params.tensor(0).data = nullptr;
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "params[0]: data is NULL");
  in.params.tensor(0).data = in.grads.tensor(0).data;
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "overlap in memory");
}

TEST(BadInput, OverlappingTensors) {
  Inputs in;
  // grads[1] starts inside params[1].
  in.grads.tensor(1).data = in.params.tensor(1).data;
  in.grads.tensor(1).byte_offset = 8;
  expect_refused(in, DT_ERR_INVALID_ARGUMENT, "params[1] and grads[1] overlap in memory");
}

// Without a usable CUDA device (or without the CUDA build), kDLCUDA tensors
// are refused, naming the first of them. With one, these host pointers
// labelled kDLCUDA would be handed to the device, so the test skips.
TEST(BadInput, CudaTensorsWithoutADeviceAreUnsupported) {
  if (dtrain::testing::cuda_device_present()) {
    GTEST_SKIP() << "this machine has a CUDA device (" << dt_build_info() << ")";
  }
  Inputs in;
  in.params.tensor(0).device = {kDLCUDA, 0};
  in.grads.tensor(0).device = {kDLCUDA, 0};
  expect_refused(in, DT_ERR_UNSUPPORTED, "params[0]: CUDA tensors need a CUDA device");
  Inputs second;
  second.params.tensor(1).device = {kDLCUDA, 0};
  second.grads.tensor(1).device = {kDLCUDA, 0};
  expect_refused(second, DT_ERR_UNSUPPORTED, "params[1]: CUDA tensors need a CUDA device");
}

TEST(BadInput, Options) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::pair<std::function<void(dt_optimizer_options&)>, std::string> cases[] = {
      {[](auto& o) { o.kind = static_cast<dt_optimizer_kind>(7); }, "options.kind = 7 is not a dt_optimizer_kind"},
      {[&](auto& o) { o.lr = -0.1f; }, "options.lr = -0.1 is not a finite number >= 0"},
      {[&](auto& o) { o.lr = nan; }, "options.lr = nan"},
      {[&](auto& o) { o.lr = inf; }, "options.lr = inf"},
      {[](auto& o) { o.weight_decay = -1.0f; }, "options.weight_decay = -1"},
      {[](auto& o) { o.momentum = 1.0f; }, "options.momentum = 1 is not in [0, 1)"},
      {[](auto& o) { o.dampening = 1.5f; }, "options.dampening = 1.5 is not in [0, 1]"},
      {[](auto& o) { o.nesterov = 2; }, "options.nesterov = 2 is not 0 or 1"},
      {[](auto& o) { o.nesterov = 1; }, "options.nesterov = 1 needs momentum > 0"},
      {[](auto& o) { o.nesterov = 1, o.momentum = 0.9f, o.dampening = 0.1f; }, "and dampening = 0"},
      {[](auto& o) { o.beta1 = 1.0f; }, "options.beta1 = 1 is not in [0, 1)"},
      {[](auto& o) { o.beta2 = -0.5f; }, "options.beta2 = -0.5"},
      {[](auto& o) { o.eps = 0.0f; }, "options.eps = 0 is not a finite number > 0"},
      {[&](auto& o) { o.max_grad_norm = nan; }, "options.max_grad_norm = nan is NaN"},
      {[](auto& o) { o.loss_scale = 0.0f; }, "options.loss_scale = 0 is not a finite number > 0"},
      {[&](auto& o) { o.loss_scale = inf; }, "options.loss_scale = inf"},
      {[](auto& o) { o.dynamic_loss_scale = DT_UNDEF; }, "options.dynamic_loss_scale = -2147483648 is not 0 or 1"},
      {[](auto& o) { o.growth_factor = 1.0f; }, "options.growth_factor = 1 is not a finite number > 1"},
      {[](auto& o) { o.backoff_factor = 1.0f; }, "options.backoff_factor = 1 is not in (0, 1)"},
      {[](auto& o) { o.growth_interval = 0; }, "options.growth_interval = 0 is not positive"},
      {[](auto& o) { o.version = 0; }, "options.version = 0 is not supported"},
      {[](auto& o) { o.version = DT_OPTIMIZER_OPTIONS_VERSION + 1; }, "options.version = 2 is not supported"},
  };
  for (const auto& [change, needle] : cases) {
    Inputs in;
    change(in.opts);
    expect_refused(in, DT_ERR_INVALID_ARGUMENT, needle);
  }
}

TEST(BadInput, OptionsInit) {
  dt_optimizer_options opts;
  opts.version = 77;
  EXPECT_EQ(dt_optimizer_options_init(&opts, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_optimizer_options_init(&opts, DT_OPTIMIZER_OPTIONS_VERSION + 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(opts.version, 77u);
  ASSERT_EQ(dt_optimizer_options_init(&opts, DT_OPTIMIZER_OPTIONS_VERSION), DT_OK);
  const dt_optimizer_options expected = DT_OPTIMIZER_OPTIONS_INIT;
  EXPECT_EQ(opts.version, expected.version);
  EXPECT_EQ(opts.kind, DT_OPTIM_ADAMW);
  EXPECT_EQ(opts.lr, 1e-3f);
  EXPECT_EQ(opts.beta2, 0.999f);
  EXPECT_EQ(opts.growth_interval, DT_UNDEF);
  EXPECT_EQ(opts.comm, nullptr);
}

TEST(BadInput, StepInfoVersionAndLr) {
  Inputs in;
  in.opts.kind = DT_OPTIM_SGD;
  dt_optimizer* opt = nullptr;
  ASSERT_EQ(dt_optimizer_create(&opt, in.params.tensors(), in.grads.tensors(), 2, &in.opts), DT_OK);
  const auto params = in.params.bytes();
  for (unsigned version : {0u, DT_OPTIMIZER_STEP_INFO_VERSION + 1}) {
    dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
    info.version = version;
    EXPECT_EQ(dt_optimizer_step(opt, &info), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(dt_error_last()).find("info->version"), std::string::npos);
    EXPECT_EQ(in.params.bytes(), params);
  }
  for (float lr : {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(dt_optimizer_set_lr(opt, lr), DT_ERR_INVALID_ARGUMENT);
  }
  float lr = 0.0f;
  ASSERT_EQ(dt_optimizer_lr(opt, &lr), DT_OK);
  EXPECT_EQ(lr, 1e-3f);
  // The refused calls took no step: the first real one is step 1.
  dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
  ASSERT_EQ(dt_optimizer_step(opt, &info), DT_OK);
  EXPECT_EQ(info.step, 1);
  dt_optimizer_destroy(opt);
}

}  // namespace
}  // namespace dtrain::testing
