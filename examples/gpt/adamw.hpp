// AdamW (PyTorch's torch.optim.AdamW: decoupled weight decay, bias
// correction) over the parameters' shards, with the moments kept in each
// Param (m, v) rather than inside a dt_optimizer, because a checkpoint must
// carry them from one mesh to another and dt_optimizer keeps its state to
// itself. The gradients arrive averaged and clipped.
#pragma once

#include <cstdint>
#include <vector>

#include "param.hpp"

namespace gpt {

struct AdamW {
  float beta1 = 0.9f, beta2 = 0.99f, eps = 1e-8f, weight_decay = 0.0f;
  int64_t steps = 0;  // taken so far: the bias correction's t

  void step(const std::vector<Param *> &params, float lr);
};

}  // namespace gpt
