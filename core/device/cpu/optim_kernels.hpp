// The optimizer's CPU kernels, one Slot at a time: plain loops over restrict
// pointers, f32 math, built at -O3 so that GCC vectorises them. The update
// kernels are fused: one pass reads each gradient, parameter (or master) and
// state element once and writes each once. The CUDA kernels
// (cuda/optim_kernels.hpp) compute the same formulas, rounded the same way.
#pragma once

#include <memory>
#include <span>

#include "device/fused_update.hpp"
#include "device/slot.hpp"
#include "device/update_step.hpp"

namespace dtrain::device::cpu {

// The sum of the squared gradients, accumulated in f64: an inf or NaN
// gradient makes it inf or NaN, and no finite f32 gradient can overflow it.
double squared_norm(const Slot& slot);

void sgd_update(const SgdStep& step, const Slot& slot);
void adamw_update(const AdamwStep& step, const Slot& slot);

// The FusedUpdate of `slots` in host memory: these loops, Slot by Slot
// (DT_ERR_UNSUPPORTED for a Slot in CUDA memory, which they would
// dereference).
std::unique_ptr<FusedUpdate> make_fused_update(std::span<const Slot> slots);

}  // namespace dtrain::device::cpu
