// The optimizer's CPU kernels, one Slot at a time: plain loops over restrict
// pointers, f32 math, built at -O3 so that GCC vectorises them. The update
// kernels are fused: one pass reads each gradient, parameter (or master) and
// state element once and writes each once.
#pragma once

#include "optim/slot.hpp"
#include "optim/step.hpp"

namespace dtrain::optim::cpu {

// The sum of the squared gradients, accumulated in f64: an inf or NaN
// gradient makes it inf or NaN, and no finite f32 gradient can overflow it.
double squared_norm(const Slot& slot);

void sgd_update(const SgdStep& step, const Slot& slot);
void adamw_update(const AdamwStep& step, const Slot& slot);

void zero_grad(const Slot& slot);
// master = the parameter widened to f32 (a Slot with f16/bf16 params only).
void load_master(const Slot& slot);

}  // namespace dtrain::optim::cpu
