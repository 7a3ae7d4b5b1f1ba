// The auxiliary losses of a router (dtrain/moe.h states the formulas): the
// Switch load-balancing loss and the ST-MoE z-loss, each with its gradient
// added to the caller's d_logits.
#pragma once

#include "parallel/moe/matrix.hpp"
#include "parallel/moe/options.hpp"

namespace dtrain::parallel::moe {

// logits [T, E]; `counts` [E] int64 or null; `d_logits` [T, E] or null
// (coeff times the gradient is added). Returns the unscaled loss.
double balance_loss(const Options& options, const Matrix& logits, double coeff, const Matrix* counts,
                    const Matrix* d_logits);

// logits [T, E]; `d_logits` as above.
double z_loss(const Matrix& logits, double coeff, const Matrix* d_logits);

}  // namespace dtrain::parallel::moe
