#include "optim/step.hpp"

#include <cmath>

namespace dtrain::optim {

using device::AdamwStep;
using device::GradScale;
using device::SgdStep;

SgdStep make_sgd_step(const SgdHyperparameters& hyper, std::int64_t step, GradScale grad) {
  SgdStep s;
  s.grad = grad;
  s.lr = hyper.lr;
  s.weight_decay = hyper.weight_decay;
  s.momentum = hyper.momentum != 0.0f;
  s.nesterov = s.momentum && hyper.nesterov;
  const bool first = step <= 1;
  s.keep = first ? 0.0f : hyper.momentum;
  s.take = first ? 1.0f : static_cast<float>(1.0 - static_cast<double>(hyper.dampening));
  s.momentum_factor = hyper.momentum;
  return s;
}

AdamwStep make_adamw_step(const AdamwHyperparameters& hyper, std::int64_t step, GradScale grad) {
  const double lr = hyper.lr;
  const double beta1 = hyper.beta1;
  const double beta2 = hyper.beta2;
  const double t = static_cast<double>(step);
  AdamwStep s;
  s.grad = grad;
  // As p - (lr * wd) * p rather than p * (1 - lr * wd): the factor 1 - lr * wd
  // rounded to f32 would be off by up to 3e-8 in the same direction on every
  // step, while the product's rounding error is lr * wd times smaller.
  s.lr_weight_decay = static_cast<float>(lr * static_cast<double>(hyper.weight_decay));
  s.beta1 = hyper.beta1;
  s.one_minus_beta1 = static_cast<float>(1.0 - beta1);
  s.beta2 = hyper.beta2;
  s.one_minus_beta2 = static_cast<float>(1.0 - beta2);
  s.step_size = static_cast<float>(lr / (1.0 - std::pow(beta1, t)));
  s.inv_sqrt_bias2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(beta2, t)));
  s.eps = hyper.eps;
  return s;
}

}  // namespace dtrain::optim
