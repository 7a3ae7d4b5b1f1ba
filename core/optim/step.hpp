// Making the constants of one optimizer step (device/update_step.hpp) from
// the hyperparameters: once per step, in double, then rounded.
#pragma once

#include <cstdint>

#include "device/update_step.hpp"
#include "optim/hyperparameters.hpp"

namespace dtrain::optim {

// `step` counts from 1: the number of the step being taken.
device::SgdStep make_sgd_step(const SgdHyperparameters& hyper, std::int64_t step, device::GradScale grad);
device::AdamwStep make_adamw_step(const AdamwHyperparameters& hyper, std::int64_t step, device::GradScale grad);

}  // namespace dtrain::optim
