#include "optim/optimizer.hpp"

#include <string>

#include "base/error.hpp"
#include "optim/grad_plan.hpp"
#include "optim/step.hpp"

namespace dtrain::optim {

int state_buffers(const Config& config) {
  if (config.kind == Kind::adamw) return 2;
  return config.sgd.momentum != 0.0f ? 1 : 0;
}

namespace {

// Every master and state buffer starts on a 256-byte boundary, so that the
// CUDA kernels' 16-byte accesses apply to them whatever the tensor sizes.
constexpr std::size_t kAlignFloats = 64;

std::size_t padded(std::int64_t count) {
  const auto n = static_cast<std::size_t>(count);
  return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

}  // namespace

Optimizer::Optimizer(const Config& config, std::span<const ParamTensor> tensors, NormReducer reducer)
    : config_(config), scaler_(config.loss_scale), reducer_(std::move(reducer)) {
  const int buffers = state_buffers(config_);
  queue_ = device::make_queue(tensors[0].param);

  std::size_t floats = 0;
  for (const ParamTensor& t : tensors) {
    floats += padded(t.param.count) * static_cast<std::size_t>(buffers + (device::needs_master(t.param.dtype) ? 1 : 0));
  }
  // Zeroed: fresh state is all zeros.
  storage_ = device::Buffer(*queue_, floats * sizeof(float));
  float* next = static_cast<float*>(storage_.data());
  slots_.reserve(tensors.size());
  for (const ParamTensor& t : tensors) {
    device::Slot slot;
    slot.param = t.param;
    slot.grad = t.grad;
    if (device::needs_master(t.param.dtype)) {
      slot.master = next;
      next += padded(t.param.count);
    }
    for (int b = 0; b < buffers; ++b) {
      slot.state[b] = next;
      next += padded(t.param.count);
    }
    slots_.push_back(slot);
  }
  // Made before the masters are read: on CUDA it checks the tensors' memory.
  update_ = queue_->fused_update(slots_);
  for (const device::Slot& slot : slots_) {
    if (slot.master) queue_->cast(DType::f32, slot.master, slot.param.dtype, slot.param.data, slot.count());
  }
  // A failed allocation or cast is reported here rather than at the first step.
  queue_->synchronize();
}

StepResult Optimizer::step() {
  double squared = update_->squared_norm();
  if (reducer_) squared = reducer_(squared);
  const GradPlan plan = plan_gradients(squared, scaler_.scale(), config_.max_grad_norm);

  StepResult result;
  result.grad_norm = plan.norm;
  result.skipped = plan.skip;
  if (!plan.skip) {
    const std::int64_t number = steps_ + 1;
    if (config_.kind == Kind::sgd) {
      update_->sgd(make_sgd_step(config_.sgd, number, plan.scale));
    } else {
      update_->adamw(make_adamw_step(config_.adamw, number, plan.scale));
    }
    steps_ = number;
  }
  scaler_.update(plan.skip);
  result.steps = steps_;
  result.loss_scale = scaler_.scale();
  return result;
}

void Optimizer::zero_grad() {
  // All-zero bits are +0.0 in every floating dtype.
  for (const device::Slot& slot : slots_) queue_->zero(slot.grad.data, slot.grad.bytes());
  queue_->synchronize();
}

void Optimizer::set_lr(float lr) {
  check_lr(lr, "lr");
  config_.sgd.lr = lr;
  config_.adamw.lr = lr;
}

void Optimizer::restore(std::int64_t steps, const LossScalerState& scaler) {
  if (steps < 0) throw Error(DT_ERR_INVALID_ARGUMENT, "step count " + std::to_string(steps) + " is negative");
  scaler_.restore(scaler);
  steps_ = steps;
}

float Optimizer::lr() const { return config_.kind == Kind::sgd ? config_.sgd.lr : config_.adamw.lr; }

}  // namespace dtrain::optim
