#include "optim/optimizer.hpp"

#include <string>

#include "base/error.hpp"
#include "device/probe.hpp"
#include "optim/grad_plan.hpp"
#include "optim/kernels.hpp"
#include "optim/param_tensors.hpp"
#include "optim/step.hpp"

namespace dtrain::optim {

int state_buffers(const Config& config) {
  if (config.kind == Kind::adamw) return 2;
  return config.sgd.momentum != 0.0f ? 1 : 0;
}

Optimizer::Optimizer(const Config& config, const DLTensor* params, const DLTensor* grads, std::size_t n,
                     NormReducer reducer)
    : config_(config), scaler_(config.loss_scale), reducer_(std::move(reducer)) {
  const std::vector<ParamTensor> tensors = check_param_tensors(params, grads, n, device::cuda_devices());
  const int buffers = state_buffers(config_);

  if (tensors[0].param.memory == Memory::cuda) {
    slots_.reserve(tensors.size());
    for (const ParamTensor& t : tensors) {
      Slot slot;
      slot.param = t.param;
      slot.grad = t.grad;
      slots_.push_back(slot);
    }
#ifdef DTRAIN_HAVE_CUDA
    device_ = make_cuda_kernels(tensors[0].param.device_id, slots_, buffers);
#else
    // check_param_tensors accepts kDLCUDA only where a device is usable.
    raise(DT_ERR_UNSUPPORTED, "optimizer: this build has no CUDA support");
#endif
    return;
  }

  // One allocation for everything, zeroed: fresh state is all zeros.
  std::size_t total = 0;
  for (const ParamTensor& t : tensors) {
    const auto count = static_cast<std::size_t>(t.param.count);
    total += count * static_cast<std::size_t>(buffers + (needs_master(t.param.dtype) ? 1 : 0));
  }
  storage_ = std::make_unique<float[]>(total);

  float* next = storage_.get();
  slots_.reserve(tensors.size());
  for (const ParamTensor& t : tensors) {
    Slot slot;
    slot.param = t.param;
    slot.grad = t.grad;
    if (needs_master(t.param.dtype)) {
      slot.master = next;
      next += t.param.count;
    }
    for (int b = 0; b < buffers; ++b) {
      slot.state[b] = next;
      next += t.param.count;
    }
    slots_.push_back(slot);
  }
  load_masters(slots_);
}

StepResult Optimizer::step() {
  double squared = device_ ? device_->squared_norm() : squared_norm(slots_);
  if (reducer_) squared = reducer_(squared);
  const GradPlan plan = plan_gradients(squared, scaler_.scale(), config_.max_grad_norm);

  StepResult result;
  result.grad_norm = plan.norm;
  result.skipped = plan.skip;
  if (!plan.skip) {
    const std::int64_t number = steps_ + 1;
    if (config_.kind == Kind::sgd) {
      const SgdStep step = make_sgd_step(config_.sgd, number, plan.scale);
      device_ ? device_->sgd_update(step) : sgd_update(step, slots_);
    } else {
      const AdamwStep step = make_adamw_step(config_.adamw, number, plan.scale);
      device_ ? device_->adamw_update(step) : adamw_update(step, slots_);
    }
    steps_ = number;
  }
  scaler_.update(plan.skip);
  result.steps = steps_;
  result.loss_scale = scaler_.scale();
  return result;
}

void Optimizer::zero_grad() { device_ ? device_->zero_grads() : zero_grads(slots_); }

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
