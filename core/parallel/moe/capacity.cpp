#include "parallel/moe/capacity.hpp"

#include <algorithm>
#include <cmath>

namespace dtrain::parallel::moe {

std::int64_t capacity_of(const Options& options, std::int64_t tokens) {
  if (options.capacity_factor <= 0.0) return -1;
  return static_cast<std::int64_t>(
      std::ceil(options.capacity_factor * static_cast<double>(tokens) * options.k / options.experts));
}

std::int64_t drop_over_capacity(const Options& options, const std::vector<float>& scores, const Matrix& experts) {
  const std::int64_t capacity = capacity_of(options, experts.rows);
  if (capacity < 0) return 0;
  // Each expert's pairs (flat indices into `experts`), in token order.
  std::vector<std::vector<std::int64_t>> pairs(static_cast<std::size_t>(options.experts));
  std::int64_t* chosen = experts.i64();
  for (std::int64_t p = 0; p < experts.rows * experts.cols; ++p) {
    pairs[static_cast<std::size_t>(chosen[p])].push_back(p);
  }
  std::int64_t dropped = 0;
  for (std::size_t e = 0; e < pairs.size(); ++e) {
    auto& list = pairs[e];
    if (static_cast<std::int64_t>(list.size()) <= capacity) continue;
    if (options.drop_policy == DropPolicy::by_score) {
      auto score = [&](std::int64_t p) {
        return scores[static_cast<std::size_t>(p / experts.cols) * pairs.size() + e];
      };
      // Highest score first; equal scores keep token order.
      std::stable_sort(list.begin(), list.end(), [&](std::int64_t a, std::int64_t b) { return score(a) > score(b); });
    }
    for (std::size_t i = static_cast<std::size_t>(capacity); i < list.size(); ++i) chosen[list[i]] = -1;
    dropped += static_cast<std::int64_t>(list.size()) - capacity;
  }
  return dropped;
}

}  // namespace dtrain::parallel::moe
