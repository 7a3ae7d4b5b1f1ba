#include "parallel/moe/aux_losses.hpp"

#include <algorithm>
#include <vector>

#include "device/kernels.hpp"
#include "parallel/moe/router.hpp"
#include "parallel/moe/scores.hpp"

namespace dtrain::parallel::moe {

namespace {

// p[t]: softmax scores as they are; sigmoid scores divided by their row sum.
std::vector<float> probabilities(Scoring scoring, const std::vector<float>& scores, std::int64_t rows,
                                 std::int64_t cols) {
  std::vector<float> p = scores;
  if (scoring == Scoring::sigmoid) {
    for (std::int64_t t = 0; t < rows; ++t) {
      float* row = &p[static_cast<std::size_t>(t * cols)];
      double sum = 0.0;
      for (std::int64_t e = 0; e < cols; ++e) sum += row[e];
      for (std::int64_t e = 0; e < cols; ++e) row[e] = static_cast<float>(row[e] / sum);
    }
  }
  return p;
}

void add_scaled(const std::vector<float>& gradient, double coeff, const Matrix& d_logits) {
  float* out = d_logits.f32();
  for (std::size_t i = 0; i < gradient.size(); ++i) out[i] += static_cast<float>(coeff * gradient[i]);
}

}  // namespace

double balance_loss(const Options& options, const Matrix& logits, double coeff, const Matrix* counts,
                    const Matrix* d_logits) {
  const std::int64_t tokens = logits.rows;
  const std::int64_t experts = logits.cols;
  const std::vector<float> scores = router_scores(options.scoring, logits);
  const TopK chosen = top_k(scores, tokens, experts, options.k);
  std::vector<std::int64_t> routed(static_cast<std::size_t>(experts), 0);
  for (std::int64_t e : chosen.experts) ++routed[static_cast<std::size_t>(e)];
  if (counts != nullptr) std::copy(routed.begin(), routed.end(), counts->i64());
  if (tokens == 0) return 0.0;

  const std::vector<float> p = probabilities(options.scoring, scores, tokens, experts);
  std::vector<double> mean_p(static_cast<std::size_t>(experts), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t e = 0; e < experts; ++e) {
      mean_p[static_cast<std::size_t>(e)] += p[static_cast<std::size_t>(t * experts + e)];
    }
  }
  double loss = 0.0;
  std::vector<float> d_p_row(static_cast<std::size_t>(experts));  // d loss / d p[t], the same for every t
  for (std::size_t e = 0; e < routed.size(); ++e) {
    const double fraction = static_cast<double>(routed[e]) / static_cast<double>(tokens * options.k);
    mean_p[e] /= static_cast<double>(tokens);
    loss += static_cast<double>(experts) * fraction * mean_p[e];
    d_p_row[e] = static_cast<float>(static_cast<double>(experts) * fraction / static_cast<double>(tokens));
  }
  if (d_logits == nullptr) return loss;

  std::vector<float> d_scores(scores.size());
  for (std::int64_t t = 0; t < tokens; ++t) {
    float* row = &d_scores[static_cast<std::size_t>(t * experts)];
    if (options.scoring == Scoring::sigmoid) {
      renormalised_backward(&scores[static_cast<std::size_t>(t * experts)], d_p_row.data(), experts, row);
    } else {
      std::copy(d_p_row.begin(), d_p_row.end(), row);
    }
  }
  std::vector<float> gradient(scores.size());
  scores_backward(options.scoring, scores, d_scores, host_f32(gradient.data(), tokens, experts));
  add_scaled(gradient, coeff, *d_logits);
  return loss;
}

double z_loss(const Matrix& logits, double coeff, const Matrix* d_logits) {
  const std::int64_t tokens = logits.rows;
  if (tokens == 0) return 0.0;
  std::vector<float> softmax(static_cast<std::size_t>(tokens * logits.cols));
  std::vector<float> lse(static_cast<std::size_t>(tokens));
  device::softmax({tokens, logits.cols}, logits.view, host_f32(softmax.data(), tokens, logits.cols).view,
                  host_f32(lse.data(), tokens, 1).view);
  double loss = 0.0;
  for (float l : lse) loss += static_cast<double>(l) * l;
  loss /= static_cast<double>(tokens);
  if (d_logits == nullptr) return loss;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double scale = 2.0 * lse[static_cast<std::size_t>(t)] / static_cast<double>(tokens);
    for (std::int64_t e = 0; e < logits.cols; ++e) {
      float& g = softmax[static_cast<std::size_t>(t * logits.cols + e)];
      g = static_cast<float>(scale * g);
    }
  }
  add_scaled(softmax, coeff, *d_logits);
  return loss;
}

}  // namespace dtrain::parallel::moe
