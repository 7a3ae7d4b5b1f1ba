// A Slot is the unit the optimizer's kernels work on (fused_update.hpp): one
// range of parameters, their gradients, and the float32 buffers the
// optimizer keeps for them, all in the memory of one place. The optimizer
// behind the C handle makes one Slot per parameter tensor; a sharded
// strategy makes Slots over its shard of flat buffers and runs the same
// kernels, so both compute bit-identical updates.
#pragma once

#include <cstdint>

#include "base/tensor.hpp"

namespace dtrain::device {

// Optimizer state per element. SGD keeps its momentum buffer in state[0]
// (only with momentum); AdamW its first and second moments in state[0] and
// state[1].
constexpr int kMaxStateBuffers = 2;

struct Slot {
  TensorView param;        // f32, f16 or bf16; written by every update
  TensorView grad;         // same dtype, memory and count as param
  float* master = nullptr;  // f32 master weights of an f16/bf16 param; nullptr for f32
  float* state[kMaxStateBuffers] = {};

  std::int64_t count() const { return param.count; }

  // The Slot of elements [first, first + n).
  Slot slice(std::int64_t first, std::int64_t n) const {
    Slot part = *this;
    part.param = param.slice(first, n);
    part.grad = grad.slice(first, n);
    if (master) part.master = master + first;
    for (float*& buffer : part.state) {
      if (buffer) buffer += first;
    }
    return part;
  }
};

// Whether a param of this dtype needs f32 master weights.
inline bool needs_master(DType dtype) { return dtype == DType::f16 || dtype == DType::bf16; }

}  // namespace dtrain::device
