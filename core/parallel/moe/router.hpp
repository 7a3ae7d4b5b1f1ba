// Top-k routing (dt_moe_route) and its backward pass.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/moe/matrix.hpp"
#include "parallel/moe/options.hpp"

namespace dtrain::parallel::moe {

// Each row's k highest scores, largest first (ties to the lower expert):
// `values` and `experts`, both [scores.rows, k].
struct TopK {
  std::vector<float> values;
  std::vector<std::int64_t> experts;
};
TopK top_k(const std::vector<float>& scores, std::int64_t rows, std::int64_t cols, int k);

// logits [T, E]; writes weights [T, k], experts [T, k] (-1 where the capacity
// dropped the pair) and returns how many pairs were dropped.
std::int64_t route(const Options& options, const Matrix& logits, const Matrix& weights, const Matrix& experts);

// d_logits [T, E] from d_weights [T, k], the top-k choice recomputed.
void route_backward(const Options& options, const Matrix& logits, const Matrix& d_weights, const Matrix& d_logits);

}  // namespace dtrain::parallel::moe
