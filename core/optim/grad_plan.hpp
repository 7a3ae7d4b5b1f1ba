// What a step does with its gradients, decided from their squared norm: skip
// the step when a gradient is inf or NaN, otherwise divide out the loss scale
// and clip to the maximum norm (torch.nn.utils.clip_grad_norm_'s rule), both
// folded into the one factor the update kernels apply.
#pragma once

#include "device/update_step.hpp"

namespace dtrain::optim {

struct GradPlan {
  double norm = 0.0;  // L2 norm of the unscaled gradients before clipping
  bool skip = false;  // the gradients hold inf or NaN
  device::GradScale scale;  // applied to the gradients by the update
};

// `squared_norm` is the sum of the squared gradients as they arrive (still
// multiplied by `loss_scale`), over every rank that holds a part of them.
// `max_grad_norm` <= 0: no clipping.
GradPlan plan_gradients(double squared_norm, float loss_scale, float max_grad_norm);

}  // namespace dtrain::optim
