#include "optim/loss_scaler.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "base/error.hpp"

namespace dtrain::optim {

LossScaler::LossScaler(const LossScalerSettings& settings)
    : settings_(settings), scale_(settings.initial_scale) {}

void LossScaler::restore(const LossScalerState& state) {
  if (!std::isfinite(state.scale) || !(state.scale > 0.0f)) {
    throw Error(DT_ERR_INVALID_ARGUMENT, "loss scale " + std::to_string(state.scale) + " is not finite and > 0");
  }
  if (state.clean_steps < 0) {
    throw Error(DT_ERR_INVALID_ARGUMENT, "clean step count " + std::to_string(state.clean_steps) + " is negative");
  }
  scale_ = state.scale;
  clean_steps_ = state.clean_steps;
}

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
