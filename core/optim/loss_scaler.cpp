#include "optim/loss_scaler.hpp"

#include <cmath>
#include <limits>

namespace dtrain::optim {

LossScaler::LossScaler(const LossScalerSettings& settings)
    : settings_(settings), scale_(settings.initial_scale) {}

void LossScaler::update(bool found_inf) {
  if (!settings_.dynamic) return;
  // The scale stays a finite, normal float: an infinite scale would turn
  // every gradient into inf and a zero one would divide by zero.
  if (found_inf) {
    clean_steps_ = 0;
    const float lower = scale_ * settings_.backoff_factor;
    if (lower >= std::numeric_limits<float>::min()) scale_ = lower;
    return;
  }
  if (++clean_steps_ < settings_.growth_interval) return;
  clean_steps_ = 0;
  const float higher = scale_ * settings_.growth_factor;
  if (std::isfinite(higher)) scale_ = higher;
}

}  // namespace dtrain::optim
