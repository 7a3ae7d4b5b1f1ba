// The internal C++ API a sharded strategy builds on: the host Queue's
// FusedUpdate over Slots and slices of Slots, the gradient plan, the loss
// scaler, and the Optimizer with a norm reducer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "base/error.hpp"
#include "optim/grad_plan.hpp"
#include "device/queue.hpp"
#include "device/slot.hpp"
#include "optim/step.hpp"
#include "optim/loss_scaler.hpp"
#include "optim/optimizer.hpp"
#include "optim/param_tensors.hpp"
#include "optim/tensors.hpp"

namespace dtrain::optim {
namespace {

using device::GradScale;
using device::Slot;
using testing::Precision;
using testing::TensorSet;

// A Slot over one tensor of `precision` with its own master and state.
struct Buffers {
  TensorSet params;
  TensorSet grads;
  std::vector<float> master, state0, state1;
  Slot slot;

  Buffers(Precision precision, std::int64_t n)
      : params(precision, {{n}}), grads(precision, {{n}}), master(n), state0(n), state1(n) {
    testing::fill_params(params, 31);
    slot.param = check_host_tensor(&params.tensor(0), "param");
    slot.grad = check_host_tensor(&grads.tensor(0), "grad");
    slot.master = precision == Precision::f32 ? nullptr : master.data();
    slot.state[0] = state0.data();
    slot.state[1] = state1.data();
    if (slot.master) device::make_host_queue()->cast(DType::f32, slot.master, slot.param.dtype, slot.param.data, n);
  }
};

// A sharded strategy updates its shard's slices; the result must be the very
// bits of the update over the whole.
TEST(Kernels, SlicesComputeWhatTheWholeComputes) {
  for (Precision precision : {Precision::f32, Precision::bf16, Precision::f16}) {
    constexpr std::int64_t n = 1001;
    Buffers whole(precision, n), parts(precision, n);
    const std::int64_t cuts[] = {0, 333, 334, 700, n};
    std::vector<Slot> slices;
    for (int k = 0; k + 1 < 5; ++k) slices.push_back(parts.slot.slice(cuts[k], cuts[k + 1] - cuts[k]));

    const auto queue = device::make_host_queue();
    const auto whole_update = queue->fused_update({&whole.slot, 1});
    const auto parts_update = queue->fused_update(slices);
    SgdHyperparameters sgd{0.05f, 0.9f, 0.0f, 0.01f, true};
    AdamwHyperparameters adamw{0.01f, 0.9f, 0.999f, 1e-8f, 0.1f};
    for (int step = 1; step <= 4; ++step) {
      testing::fill_grads(whole.grads, step);
      testing::fill_grads(parts.grads, step);
      const double sum = whole_update->squared_norm();
      EXPECT_NEAR(parts_update->squared_norm(), sum, 1e-12 * sum);
      const GradScale scale{step % 2 ? 1.0f : 0.5f};
      if (step <= 2) {
        whole_update->sgd(make_sgd_step(sgd, step, scale));
        parts_update->sgd(make_sgd_step(sgd, step, scale));
      } else {
        whole_update->adamw(make_adamw_step(adamw, step, scale));
        parts_update->adamw(make_adamw_step(adamw, step, scale));
      }
      EXPECT_EQ(whole.params.bytes(), parts.params.bytes());
      EXPECT_EQ(whole.grads.bytes(), parts.grads.bytes());
      EXPECT_EQ(whole.master, parts.master);
      EXPECT_EQ(whole.state0, parts.state0);
    }
  }
}

TEST(Kernels, SquaredNormIsExactForSmallIntegers) {
  Buffers b(Precision::bf16, 37);
  for (std::int64_t j = 0; j < 37; ++j) b.grads.set(0, j, static_cast<float>(j % 5));
  const auto update = device::make_host_queue()->fused_update({&b.slot, 1});
  EXPECT_EQ(update->squared_norm(), 7 * (0 + 1 + 4 + 9 + 16) + 0 + 1);
  b.grads.set(0, 36, std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(update->squared_norm()));
}

TEST(Kernels, CudaSlotsAreRefused) {
  Buffers b(Precision::f32, 4);
  b.slot.param.memory = Memory::cuda;
  try {
    device::make_host_queue()->fused_update({&b.slot, 1});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_UNSUPPORTED);
  }
}

TEST(GradPlan, UnscalesClipsAndSkips) {
  GradPlan plan = plan_gradients(25.0 * 64 * 64, 64.0f, 0.0f);
  EXPECT_EQ(plan.norm, 5.0);
  EXPECT_FALSE(plan.skip);
  EXPECT_EQ(plan.scale.factor, 1.0f / 64);

  plan = plan_gradients(25.0, 1.0f, 2.5f);
  EXPECT_EQ(plan.scale.factor, static_cast<float>(2.5 / (5.0 + 1e-6)));
  plan = plan_gradients(25.0, 1.0f, 10.0f);
  EXPECT_EQ(plan.scale.factor, 1.0f);
  EXPECT_FALSE(plan.scale.write_back());

  plan = plan_gradients(std::numeric_limits<double>::infinity(), 8.0f, 1.0f);
  EXPECT_TRUE(plan.skip);
  plan = plan_gradients(std::nan(""), 8.0f, 1.0f);
  EXPECT_TRUE(plan.skip);
}

TEST(LossScaler, BacksOffGrowsAndStaysFinite) {
  LossScaler scaler({65536.0f, true, 2.0f, 0.5f, 2});
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 65536.0f);

  LossScaler high({std::numeric_limits<float>::max() / 1.5f, true, 2.0f, 0.5f, 1});
  high.update(false);
  EXPECT_TRUE(std::isfinite(high.scale()));
  LossScaler low({std::numeric_limits<float>::min(), true, 2.0f, 0.5f, 1});
  low.update(true);
  EXPECT_EQ(low.scale(), std::numeric_limits<float>::min());

  LossScaler fixed({4.0f, false, 2.0f, 0.5f, 1});
  fixed.update(true);
  fixed.update(false);
  EXPECT_EQ(fixed.scale(), 4.0f);
}

TEST(Optimizer, ReducerSumsTheNormOverShards) {
  TensorSet params(Precision::f32, {{3}});
  TensorSet grads(Precision::f32, {{3}});
  for (int j = 0; j < 3; ++j) grads.set(0, j, 2.0f);  // squared norm 12
  Config config;
  int calls = 0;
  Optimizer opt(config, testing::checked(params.tensors(), grads.tensors(), 1), [&](double local) {
    ++calls;
    return 3 * local;  // as if two more ranks held the same gradients
  });
  const StepResult result = opt.step();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(result.grad_norm, 6.0);
}

TEST(Optimizer, AFailingReducerChangesNothing) {
  TensorSet params(Precision::bf16, {{5}});
  TensorSet grads(Precision::bf16, {{5}});
  testing::fill_params(params, 1);
  testing::fill_grads(grads, 2);
  Config config;
  config.max_grad_norm = 0.1f;
  Optimizer opt(config, testing::checked(params.tensors(), grads.tensors(), 1),
                [](double) -> double { raise(DT_ERR_TIMEOUT, "allreduce timed out"); });
  const auto p = params.bytes();
  const auto g = grads.bytes();
  EXPECT_THROW(opt.step(), Error);
  EXPECT_EQ(params.bytes(), p);
  EXPECT_EQ(grads.bytes(), g);
  EXPECT_EQ(opt.steps(), 0);
}

TEST(Optimizer, StateIsAllocatedPerKind) {
  TensorSet params(Precision::f16, {{6}, {2}});
  TensorSet grads(Precision::f16, {{6}, {2}});
  Config config;
  config.kind = Kind::sgd;
  Optimizer plain(config, testing::checked(params.tensors(), grads.tensors(), 2));
  EXPECT_NE(plain.slots()[0].master, nullptr);
  EXPECT_EQ(plain.slots()[0].state[0], nullptr);
  config.sgd.momentum = 0.5f;
  Optimizer momentum(config, testing::checked(params.tensors(), grads.tensors(), 2));
  EXPECT_NE(momentum.slots()[1].state[0], nullptr);
  EXPECT_EQ(momentum.slots()[1].state[1], nullptr);
  config.kind = Kind::adamw;
  Optimizer adamw(config, testing::checked(params.tensors(), grads.tensors(), 2));
  EXPECT_NE(adamw.slots()[1].state[1], nullptr);
}

// Where to run an optimizer is decided from its tensors before any is read,
// so these run on every machine: the CUDA devices are reported, as the device
// layer would on a machine with two, and the kDLCUDA tensors are host memory
// that nothing dereferences.
struct Placement {
  TensorSet params{Precision::f32, {{4}, {3}, {5}}};
  TensorSet grads{Precision::f32, {{4}, {3}, {5}}};
  const CudaDevices two{2, ""};

  void on(std::size_t i, DLDevice device) {
    params.tensor(i).device = device;
    grads.tensor(i).device = device;
  }
  // The status and message the checks throw ("" when it accepts).
  std::pair<dt_status, std::string> check() {
    try {
      testing::checked(params.tensors(), grads.tensors(), params.size(), two);
      return {DT_OK, ""};
    } catch (const Error& e) {
      return {e.status(), e.what()};
    }
  }
};

TEST(ParamTensors, OneDeviceIsAccepted) {
  Placement cuda;
  for (std::size_t i = 0; i < 3; ++i) cuda.on(i, {kDLCUDA, 1});
  EXPECT_EQ(cuda.check().first, DT_OK) << cuda.check().second;
  const std::vector<ParamTensor> views = testing::checked(cuda.params.tensors(), cuda.grads.tensors(), 3, cuda.two);
  EXPECT_EQ(views[2].param.memory, Memory::cuda);
  EXPECT_EQ(views[2].grad.device_id, 1);
  Placement host;
  host.on(1, {kDLCUDAHost, 0});  // pinned host memory is host memory
  EXPECT_EQ(host.check().first, DT_OK) << host.check().second;
}

TEST(ParamTensors, MixedDevicesAreRefused) {
  Placement host_then_cuda;
  host_then_cuda.on(2, {kDLCUDA, 0});
  EXPECT_EQ(host_then_cuda.check(),
            std::pair(DT_ERR_INVALID_ARGUMENT, std::string("params[2]: on CUDA device 0, but params[0] is in host "
                                                           "memory; all tensors of an optimizer must be on one "
                                                           "device")));
  Placement two_devices;
  for (std::size_t i = 0; i < 3; ++i) two_devices.on(i, {kDLCUDA, 0});
  two_devices.on(1, {kDLCUDA, 1});
  EXPECT_EQ(two_devices.check().first, DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(two_devices.check().second.rfind("params[1]: on CUDA device 1, but params[0] is on CUDA device 0", 0), 0u)
      << two_devices.check().second;
  Placement cuda_then_host;
  cuda_then_host.on(0, {kDLCUDA, 0});
  EXPECT_EQ(cuda_then_host.check().second.rfind("params[1]: in host memory, but params[0] is on CUDA device 0", 0), 0u)
      << cuda_then_host.check().second;
  Placement grad_elsewhere;
  for (std::size_t i = 0; i < 3; ++i) grad_elsewhere.on(i, {kDLCUDA, 0});
  grad_elsewhere.grads.tensor(1).device = {kDLCUDA, 1};
  EXPECT_EQ(grad_elsewhere.check(),
            std::pair(DT_ERR_INVALID_ARGUMENT, std::string("grads[1]: not on its parameter's device")));
}

TEST(ParamTensors, CudaDataMustBeAlignedToItsElements) {
  Placement cuda;
  for (std::size_t i = 0; i < 3; ++i) cuda.on(i, {kDLCUDA, 0});
  cuda.grads.tensor(2).byte_offset = 2;  // never read: the check comes first
  EXPECT_EQ(cuda.check(),
            std::pair(DT_ERR_INVALID_ARGUMENT, std::string("grads[2]: data is not aligned to its 4-byte elements")));
}

TEST(ParamTensors, CudaWithoutADeviceNamesTheTensor) {
  Placement cuda;
  cuda.on(1, {kDLCUDA, 0});
  try {
    testing::checked(cuda.params.tensors(), cuda.grads.tensors(), 3, CudaDevices{0, "no CUDA device (test)"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_UNSUPPORTED);
    EXPECT_STREQ(e.what(), "params[1]: CUDA tensors need a CUDA device, and no CUDA device (test)");
  }
}

}  // namespace
}  // namespace dtrain::optim
