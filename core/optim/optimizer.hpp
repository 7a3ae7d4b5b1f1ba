// An optimizer over a set of caller-owned parameter and gradient tensors:
// what a dt_optimizer handle holds. It owns the f32 master weights and the
// optimizer state, and runs each step as gradient norm, skip-or-plan
// (loss scale and clipping, grad_plan.hpp), fused update, loss-scale update.
// The work runs on a device::Queue of the tensors' place, through its
// FusedUpdate: the CPU loops for host tensors, the fused multi-tensor
// kernels for tensors on a CUDA device, with the master weights and state in
// that device's memory and the norm copied back once per step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "device/buffer.hpp"
#include "device/fused_update.hpp"
#include "device/queue.hpp"
#include "device/slot.hpp"
#include "optim/config.hpp"
#include "optim/loss_scaler.hpp"
#include "optim/param_tensors.hpp"

namespace dtrain::optim {

struct StepResult {
  bool skipped = false;
  double grad_norm = 0.0;
  std::int64_t steps = 0;  // steps applied so far
  float loss_scale = 1.0f;
};

class Optimizer {
 public:
  // Sums this rank's squared gradient norm over the ranks that hold the other
  // shards of a sharded model. Empty: the tensors are the whole model.
  using NormReducer = std::function<double(double)>;

  // Allocates zeroed state and fills the master weights of f16/bf16 params,
  // on the tensors' device. `tensors` are as check_param_tensors()
  // (param_tensors.hpp) accepts them: at least one, on one device, none
  // sharing a byte; the caller's are checked there, at the C API. Writes
  // nothing the caller owns; reads and updates the tensors' memory until
  // destroyed.
  Optimizer(const Config& config, std::span<const ParamTensor> tensors, NormReducer reducer = {});

  // One step. When the reducer throws, nothing has been updated.
  StepResult step();
  void zero_grad();

  void set_lr(float lr);
  float lr() const;
  float loss_scale() const { return scaler_.scale(); }
  std::int64_t steps() const { return steps_; }
  // The master and state pointers are in the tensors' memory: device memory
  // for CUDA tensors.
  std::span<const device::Slot> slots() const { return slots_; }
  LossScalerState loss_scaler_state() const { return scaler_.state(); }
  // Sets the counters a checkpoint saved (the Slots' buffers are written by
  // the caller). Throws DT_ERR_INVALID_ARGUMENT, changing nothing, for
  // negative steps or a bad scaler state.
  void restore(std::int64_t steps, const LossScalerState& scaler);

 private:
  Config config_;
  std::unique_ptr<device::Queue> queue_;  // the tensors' place; outlives the two below
  std::vector<device::Slot> slots_;
  device::Buffer storage_;  // every Slot's master weights and state
  std::unique_ptr<device::FusedUpdate> update_;
  LossScaler scaler_;
  NormReducer reducer_;
  std::int64_t steps_ = 0;
};

// How many f32 state buffers per element `kind` keeps.
int state_buffers(const Config& config);

}  // namespace dtrain::optim
