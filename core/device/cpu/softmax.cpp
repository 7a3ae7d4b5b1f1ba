// Softmax along rows, and its backward pass (device/kernel_args.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

template <typename E>
void softmax_rows(const SoftmaxArgs& a) {
  using Bits = typename E::Bits;
  const auto* x = static_cast<const Bits*>(a.x);
  auto* y = static_cast<Bits*>(a.y);
  const std::int64_t cols = a.shape.cols;
  std::vector<float> row(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < a.shape.rows; ++r) {
    float max = -std::numeric_limits<float>::infinity();
    for (std::int64_t j = 0; j < cols; ++j) {
      row[j] = E::load(x[r * cols + j]);
      max = std::max(max, row[j]);
    }
    // Subtracting the maximum keeps exp() from overflowing; the sum is then
    // at least 1, so its log is well conditioned.
    float sum = 0.0f;
    for (std::int64_t j = 0; j < cols; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    const float inverse = 1.0f / sum;
    for (std::int64_t j = 0; j < cols; ++j) y[r * cols + j] = E::store(row[j] * inverse);
    a.lse[r] = max + std::log(sum);
  }
}

template <typename E>
void softmax_backward_rows(const SoftmaxBackwardArgs& a) {
  using Bits = typename E::Bits;
  const auto* y = static_cast<const Bits*>(a.y);
  const auto* dy = static_cast<const Bits*>(a.dy);
  auto* dx = static_cast<Bits*>(a.dx);
  const std::int64_t cols = a.shape.cols;
  for (std::int64_t r = 0; r < a.shape.rows; ++r) {
    const std::int64_t base = r * cols;
    float dot = 0.0f;
    for (std::int64_t j = 0; j < cols; ++j) dot += E::load(dy[base + j]) * E::load(y[base + j]);
    for (std::int64_t j = 0; j < cols; ++j) {
      dx[base + j] = E::store(E::load(y[base + j]) * (E::load(dy[base + j]) - dot));
    }
  }
}

}  // namespace

void softmax(const SoftmaxArgs& args) {
  with_element(args.dtype, "softmax", [&](auto e) { softmax_rows<decltype(e)>(args); });
}

void softmax_backward(const SoftmaxBackwardArgs& args) {
  with_element(args.dtype, "softmax_backward", [&](auto e) { softmax_backward_rows<decltype(e)>(args); });
}

}  // namespace dtrain::device::cpu
