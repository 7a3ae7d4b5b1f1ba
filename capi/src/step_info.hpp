// dt_optimizer_step_info, filled in by dt_optimizer_step and dt_zero_step.
#pragma once

#include <cstddef>

#include "base/options.hpp"
#include "dtrain/optim.h"
#include "optim/optimizer.hpp"

namespace dtrain::capi {

// Size of each released version of dt_optimizer_step_info; index = version.
constexpr std::size_t kStepInfoSizes[] = {0, sizeof(dt_optimizer_step_info)};

// Throws DT_ERR_INVALID_ARGUMENT for an `info` (NULL: none wanted) whose
// version this library does not write; call before the step.
inline void check_step_info(const dt_optimizer_step_info* info) {
  if (info != nullptr) check_output_version(info->version, kStepInfoSizes, "info", "DT_OPTIMIZER_STEP_INFO_INIT");
}

inline void write_step_info(const optim::StepResult& result, dt_optimizer_step_info* info) {
  if (info == nullptr) return;
  // Version 1 is every field there is so far.
  info->skipped = result.skipped ? 1 : 0;
  info->grad_norm = result.grad_norm;
  info->step = result.steps;
  info->loss_scale = result.loss_scale;
}

}  // namespace dtrain::capi
