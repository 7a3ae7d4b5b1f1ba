// The k largest elements of each row (device/kernel_args.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"
#include "device/top_k_order.hpp"

namespace dtrain::device::cpu {

namespace {

template <typename E>
void top_k_rows(const TopKArgs& a) {
  using Bits = typename E::Bits;
  const auto* x = static_cast<const Bits*>(a.x);
  auto* values = static_cast<Bits*>(a.values);
  const std::int64_t cols = a.shape.cols;
  std::vector<float> row(static_cast<std::size_t>(cols));
  std::vector<std::int64_t> order(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < a.shape.rows; ++r) {
    for (std::int64_t j = 0; j < cols; ++j) row[j] = E::load(x[r * cols + j]);
    std::iota(order.begin(), order.end(), std::int64_t{0});
    // partial_sort: O(cols log k), the k winners sorted, the rest untouched.
    std::partial_sort(order.begin(), order.begin() + a.k, order.end(), [&](std::int64_t i, std::int64_t j) {
      return ranks_before(row[i], i, row[j], j);
    });
    for (std::int64_t i = 0; i < a.k; ++i) {
      values[r * a.k + i] = x[r * cols + order[i]];
      a.indices[r * a.k + i] = order[i];
    }
  }
}

}  // namespace

void top_k(const TopKArgs& args) {
  with_element(args.dtype, "top_k", [&](auto e) { top_k_rows<decltype(e)>(args); });
}

}  // namespace dtrain::device::cpu
