// The capacity limit: how many of its tokens an expert keeps on one rank,
// and which pairs are dropped when more chose it.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/moe/matrix.hpp"
#include "parallel/moe/options.hpp"

namespace dtrain::parallel::moe {

// ceil(capacity_factor * tokens * k / E), or -1 when dropless.
std::int64_t capacity_of(const Options& options, std::int64_t tokens);

// Sets experts[t][j] to -1 for the pairs over capacity (options.drop_policy
// picks them; `scores` [T, E] rank them by score) and returns their number.
std::int64_t drop_over_capacity(const Options& options, const std::vector<float>& scores, const Matrix& experts);

}  // namespace dtrain::parallel::moe
