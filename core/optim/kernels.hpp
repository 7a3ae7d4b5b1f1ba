// The optimizer's element-wise work over the Slots of one step, in host
// memory: the CPU's vectorised loops, Slot by Slot. Slots in CUDA memory are
// refused with DT_ERR_UNSUPPORTED; the Optimizer runs those through its
// device kernels (device_kernels.hpp), which fuse every Slot of a step into
// one launch.
#pragma once

#include <span>

#include "optim/slot.hpp"
#include "optim/step.hpp"

namespace dtrain::optim {

// The sum of the squared raw gradients, in f64 (inf or NaN when a gradient is).
double squared_norm(std::span<const Slot> slots);

void sgd_update(const SgdStep& step, std::span<const Slot> slots);
void adamw_update(const AdamwStep& step, std::span<const Slot> slots);

void zero_grads(std::span<const Slot> slots);
// Fills the master weights of the Slots that have them from their params.
void load_masters(std::span<const Slot> slots);

}  // namespace dtrain::optim
