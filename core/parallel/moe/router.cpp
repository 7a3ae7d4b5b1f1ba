#include "parallel/moe/router.hpp"

#include <algorithm>

#include "device/kernels.hpp"
#include "parallel/moe/capacity.hpp"
#include "parallel/moe/scores.hpp"

namespace dtrain::parallel::moe {

TopK top_k(const std::vector<float>& scores, std::int64_t rows, std::int64_t cols, int k) {
  TopK result{std::vector<float>(static_cast<std::size_t>(rows * k)),
              std::vector<std::int64_t>(static_cast<std::size_t>(rows * k))};
  // The kernel reads its operands as mutable views; it writes only the outputs.
  auto* x = const_cast<float*>(scores.data());
  device::top_k({rows, cols}, k, host_f32(x, rows, cols).view, host_f32(result.values.data(), rows, k).view,
                host_i64(result.experts.data(), rows, k).view);
  return result;
}

std::int64_t route(const Options& options, const Matrix& logits, const Matrix& weights, const Matrix& experts) {
  const std::vector<float> scores = router_scores(options.scoring, logits);
  const TopK chosen = top_k(scores, logits.rows, logits.cols, options.k);
  float* w = weights.f32();
  for (std::int64_t t = 0; t < logits.rows; ++t) {
    const float* v = &chosen.values[static_cast<std::size_t>(t * options.k)];
    double sum = 0.0;
    for (int j = 0; j < options.k; ++j) sum += v[j];
    for (int j = 0; j < options.k; ++j) {
      w[t * options.k + j] = options.normalize ? static_cast<float>(v[j] / sum) : v[j];
    }
  }
  std::copy(chosen.experts.begin(), chosen.experts.end(), experts.i64());
  return drop_over_capacity(options, scores, experts);
}

void route_backward(const Options& options, const Matrix& logits, const Matrix& d_weights, const Matrix& d_logits) {
  const std::vector<float> scores = router_scores(options.scoring, logits);
  const TopK chosen = top_k(scores, logits.rows, logits.cols, options.k);
  std::vector<float> d_scores(scores.size(), 0.0f);
  std::vector<float> d_values(static_cast<std::size_t>(options.k));
  for (std::int64_t t = 0; t < logits.rows; ++t) {
    const std::size_t first = static_cast<std::size_t>(t * options.k);
    const float* dw = d_weights.f32() + first;
    if (options.normalize) {
      renormalised_backward(&chosen.values[first], dw, options.k, d_values.data());
    } else {
      std::copy(dw, dw + options.k, d_values.begin());
    }
    for (int j = 0; j < options.k; ++j) {
      const std::int64_t e = chosen.experts[first + static_cast<std::size_t>(j)];
      d_scores[static_cast<std::size_t>(t * logits.cols + e)] = d_values[static_cast<std::size_t>(j)];
    }
  }
  scores_backward(options.scoring, scores, d_scores, d_logits);
}

}  // namespace dtrain::parallel::moe
