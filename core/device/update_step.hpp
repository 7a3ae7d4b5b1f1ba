// The constants of one optimizer step: what the kernels need beyond the
// Slots, computed once per step (in double, then rounded; optim/step.hpp
// makes them) and shared by every Slot of the step.
#pragma once

namespace dtrain::device {

// Gradients enter every update multiplied by grad_scale: 1 / loss scale,
// times the clipping factor. When it is not 1 the kernels also store the
// scaled gradient back, so the caller sees the gradient that was applied.
struct GradScale {
  float factor = 1.0f;
  bool write_back() const { return factor != 1.0f; }
};

struct SgdStep {
  GradScale grad;
  float lr = 0.0f;
  float weight_decay = 0.0f;
  bool momentum = false;  // a momentum buffer is kept (state[0])
  bool nesterov = false;
  // buffer = keep * buffer + take * g: (momentum, 1 - dampening), or (0, 1)
  // on the first step, when the buffer starts as the gradient itself.
  float keep = 0.0f;
  float take = 1.0f;
  float momentum_factor = 0.0f;  // Nesterov: g + momentum_factor * buffer
};

struct AdamwStep {
  GradScale grad;
  float lr_weight_decay = 0.0f;  // p -= lr * weight_decay * p
  float beta1 = 0.0f, one_minus_beta1 = 1.0f;
  float beta2 = 0.0f, one_minus_beta2 = 1.0f;
  float step_size = 0.0f;       // lr / (1 - beta1^t)
  float inv_sqrt_bias2 = 1.0f;  // 1 / sqrt(1 - beta2^t)
  float eps = 0.0f;
};

}  // namespace dtrain::device
