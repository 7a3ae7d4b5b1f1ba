#include "optim/grad_plan.hpp"

#include <cmath>

namespace dtrain::optim {

namespace {
// clip_grad_norm_ adds this to the norm so that a zero norm never divides.
constexpr double kClipEpsilon = 1e-6;
}  // namespace

GradPlan plan_gradients(double squared_norm, float loss_scale, float max_grad_norm) {
  GradPlan plan;
  plan.norm = std::sqrt(squared_norm) / static_cast<double>(loss_scale);
  plan.skip = !std::isfinite(squared_norm);
  if (plan.skip) return plan;
  double factor = 1.0 / static_cast<double>(loss_scale);
  if (max_grad_norm > 0.0f) {
    const double clip = static_cast<double>(max_grad_norm) / (plan.norm + kClipEpsilon);
    if (clip < 1.0) factor *= clip;
  }
  plan.scale.factor = static_cast<float>(factor);
  return plan;
}

}  // namespace dtrain::optim
