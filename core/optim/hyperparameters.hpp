// The hyperparameters of each update rule, as torch.optim.SGD and
// torch.optim.AdamW define them.
#pragma once

namespace dtrain::optim {

struct SgdHyperparameters {
  float lr = 1e-3f;
  float momentum = 0.0f;      // 0: no momentum buffer
  float dampening = 0.0f;
  float weight_decay = 0.0f;  // L2: added to the gradient
  bool nesterov = false;
};

struct AdamwHyperparameters {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // decoupled: params shrink by lr * weight_decay
};

}  // namespace dtrain::optim
