// The built-in expert (dt_moe_experts_forward/backward): one two-layer MLP
// per local expert, run block by block on the rows a dispatch grouped by
// expert, through the device layer's GEMM and activation kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "device/kernel_args.hpp"
#include "device/queue.hpp"
#include "parallel/moe/matrix.hpp"

namespace dtrain::parallel::moe {

// The experts' operands, checked against each other: x [R, H], w1 [L, H, F],
// w2 [L, F, H] (as (L*H) x F and (L*F) x H matrices), rows per expert.
struct ExpertBlocks {
  Matrix x;
  Matrix w1;
  Matrix w2;
  std::vector<std::int64_t> counts;  // L entries summing to R
  std::int64_t hidden = 0;           // H
  std::int64_t inner = 0;            // F
  device::Activation activation = device::Activation::gelu_tanh;
};

// Checks x, counts, w1 and w2 (dtrain/moe.h says what is refused) and the
// activation's C value. counts must be in host memory; the others may be
// anywhere.
ExpertBlocks read_expert_blocks(const CheckedTensor& x, const CheckedTensor& counts, const CheckedTensor& w1,
                                const CheckedTensor& w2, int activation);

// hidden [R, F] (pre-activation) and y [R, H], computed on `queue`, where
// every matrix is (on a device the call returns once the work is queued).
void experts_forward(const ExpertBlocks& blocks, device::Queue& queue, const Matrix& hidden, const Matrix& y);

// From dy [R, H] and the forward's hidden: dx [R, H], dw1 and dw2 (as w1,
// w2), on `queue` as experts_forward.
void experts_backward(const ExpertBlocks& blocks, device::Queue& queue, const Matrix& hidden, const Matrix& dy,
                      const Matrix& dx, const Matrix& dw1, const Matrix& dw2);

}  // namespace dtrain::parallel::moe
