// What a Zero holds, worked out from its layout alone: the buffers its
// constructor allocates, by purpose, for the rank that owns `layout`'s
// shards. The planner predicts memory with it, so that a plan and a run of
// the same model agree to the byte.
#pragma once

#include "base/dtype.hpp"
#include "parallel/zero/layout.hpp"
#include "parallel/zero/memory.hpp"

namespace dtrain::parallel::zero {

// The usage right after creation: the parameters (whole units in stages
// 0-2, this rank's shards in stage 3), the gradients (whole units in stages
// 0-1, shards in 2-3), f32 master weights for 16-bit dtypes and
// `state_buffers` f32 optimizer buffers over this rank's shards, no
// communication buffers. `peak` adds what creation held for a moment: in
// stage 3, the staging copy of the largest unit, while the shards of
// parameters and gradients already existed.
MemoryUsage footprint(const Layout& layout, int stage, DType dtype, int state_buffers);

}  // namespace dtrain::parallel::zero
