// Double-precision references for the layer kernels (what they compute:
// device/kernel_args.hpp), and gradients by central differences, against
// which the kernels' backward passes are checked.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "device/kernel_args.hpp"

namespace dtrain::test {

using Values = std::vector<double>;

struct SoftmaxResult {
  Values y, lse;
};
SoftmaxResult softmax_reference(device::RowShape shape, const Values& x);

double activation_reference(device::Activation kind, double x);

struct NormResult {
  Values y, mean, rstd;
};
// Layer norm when `centred`, RMS norm otherwise (beta then unused).
NormResult norm_reference(device::RowShape shape, double eps, bool centred, const Values& x, const Values& gamma,
                          const Values& beta);

// The gradient of sum_i dy[i] * f(v)[i] with respect to v, by central
// differences (step 1e-5: truncation and rounding errors near 1e-10 for
// the smooth functions here).
Values numeric_gradient(const std::function<Values(const Values&)>& f, Values v, const Values& dy);

// The largest |value|, for tolerances relative to a tensor's scale.
double largest(const Values& values);

}  // namespace dtrain::test
