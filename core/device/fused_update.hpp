// The optimizer's step over a fixed set of Slots, on the Slots' device: the
// gradients' norm and the SGD and AdamW updates, each one fused pass over
// every element (on CUDA one launch for all the Slots, as apex's and
// PyTorch's multi_tensor_apply do). Made by Queue::fused_update(), which
// prepares what every step reuses (CUDA: the table of chunks, uploaded
// once). Each call returns once its work has run, so the Slots' memory is
// written only inside it. Results do not depend on the device: the CUDA
// kernels round every f32 operation as the CPU loops do.
#pragma once

#include "device/update_step.hpp"

namespace dtrain::device {

class FusedUpdate {
 public:
  virtual ~FusedUpdate() = default;

  // The sum of the squared raw gradients, accumulated in f64 (inf or NaN
  // when a gradient is).
  virtual double squared_norm() = 0;
  virtual void sgd(const SgdStep& step) = 0;
  virtual void adamw(const AdamwStep& step) = 0;
};

}  // namespace dtrain::device
