// The optimizers as torch.optim writes them, in float64, one scalar at a
// time: the reference the library's f32 kernels are held to.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "dtrain.h"

namespace dtrain::testing {

using Values = std::vector<std::vector<double>>;

class Reference {
 public:
  Reference(const dt_optimizer_options& opts, Values params)
      : opts_(opts), params_(std::move(params)), buffer_(zeros()), m_(zeros()), v_(zeros()) {}

  struct Step {
    bool skipped = false;
    double norm = 0.0;   // of the unscaled gradients, before clipping
    Values applied;      // the gradients the update used
  };

  // `grads` as they arrive, multiplied by `loss_scale`.
  Step step(const Values& grads, double loss_scale = 1.0) {
    Step s;
    double squared = 0.0;
    for (const auto& g : grads) {
      for (double x : g) squared += x * x;
    }
    s.norm = std::sqrt(squared) / loss_scale;
    s.skipped = !std::isfinite(squared);
    if (s.skipped) return s;
    double factor = 1.0 / loss_scale;
    if (opts_.max_grad_norm > 0) {
      const double clip = opts_.max_grad_norm / (s.norm + 1e-6);
      if (clip < 1.0) factor *= clip;
    }
    s.applied = grads;
    for (auto& g : s.applied) {
      for (double& x : g) x *= factor;
    }
    ++t_;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      for (std::size_t j = 0; j < params_[i].size(); ++j) {
        if (opts_.kind == DT_OPTIM_SGD) {
          sgd(params_[i][j], s.applied[i][j], buffer_[i][j]);
        } else {
          adamw(params_[i][j], s.applied[i][j], m_[i][j], v_[i][j]);
        }
      }
    }
    return s;
  }

  const Values& params() const { return params_; }
  std::int64_t steps() const { return t_; }

 private:
  void sgd(double& p, double g, double& buffer) const {
    const double momentum = opts_.momentum;
    double d = g + static_cast<double>(opts_.weight_decay) * p;
    if (momentum != 0.0) {
      buffer = t_ == 1 ? d : momentum * buffer + (1.0 - opts_.dampening) * d;
      d = opts_.nesterov ? d + momentum * buffer : buffer;
    }
    p -= static_cast<double>(opts_.lr) * d;
  }

  void adamw(double& p, double g, double& m, double& v) const {
    const double lr = opts_.lr, beta1 = opts_.beta1, beta2 = opts_.beta2;
    const double t = static_cast<double>(t_);
    p *= 1.0 - lr * static_cast<double>(opts_.weight_decay);
    m = beta1 * m + (1.0 - beta1) * g;
    v = beta2 * v + (1.0 - beta2) * g * g;
    const double denom = std::sqrt(v) / std::sqrt(1.0 - std::pow(beta2, t)) + static_cast<double>(opts_.eps);
    p -= lr / (1.0 - std::pow(beta1, t)) * m / denom;
  }

  Values zeros() const {
    Values z(params_.size());
    for (std::size_t i = 0; i < params_.size(); ++i) z[i].assign(params_[i].size(), 0.0);
    return z;
  }

  dt_optimizer_options opts_;
  Values params_;
  Values buffer_, m_, v_;
  std::int64_t t_ = 0;
};

}  // namespace dtrain::testing
