// The Optimizer's kernels for Slots in CUDA memory. Unlike the host kernels
// (kernels.hpp), which take the Slots on every call, these own what lives on
// the device for the Optimizer's lifetime: the f32 master weights and state,
// the table of chunks the fused multi-tensor kernels read
// (device/cuda/optim_kernels.hpp), and the stream they run on. Every call
// returns once its work on the device is done, so that the caller's tensors
// are written only inside it.
#pragma once

#include <memory>
#include <vector>

#include "optim/slot.hpp"
#include "optim/step.hpp"

namespace dtrain::optim {

class DeviceKernels {
 public:
  virtual ~DeviceKernels() = default;

  // The sum of the squared raw gradients in f64, reduced on the device and
  // copied back (inf or NaN when a gradient is).
  virtual double squared_norm() = 0;
  virtual void sgd_update(const SgdStep& step) = 0;
  virtual void adamw_update(const AdamwStep& step) = 0;
  virtual void zero_grads() = 0;
};

// For Slots whose params and grads are on CUDA device `device`: allocates
// there the zeroed state (`buffers` f32 buffers per element) and the master
// weights of f16/bf16 params, points the Slots at them, and fills the masters
// from the params. Defined in CUDA builds only.
std::unique_ptr<DeviceKernels> make_cuda_kernels(int device, std::vector<Slot>& slots, int buffers);

}  // namespace dtrain::optim
