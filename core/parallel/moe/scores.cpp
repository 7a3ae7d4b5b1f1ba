#include "parallel/moe/scores.hpp"

#include <cmath>

#include "device/kernels.hpp"

namespace dtrain::parallel::moe {

std::vector<float> router_scores(Scoring scoring, const Matrix& logits) {
  std::vector<float> scores(static_cast<std::size_t>(logits.rows * logits.cols));
  const Matrix out = host_f32(scores.data(), logits.rows, logits.cols);
  if (scoring == Scoring::softmax) {
    std::vector<float> lse(static_cast<std::size_t>(logits.rows));
    device::softmax({logits.rows, logits.cols}, logits.view, out.view,
                    host_f32(lse.data(), logits.rows, 1).view);
  } else {
    const float* x = logits.f32();
    for (std::size_t i = 0; i < scores.size(); ++i) scores[i] = 1.0f / (1.0f + std::exp(-x[i]));
  }
  return scores;
}

void scores_backward(Scoring scoring, const std::vector<float>& scores, const std::vector<float>& d_scores,
                     const Matrix& d_logits) {
  if (scoring == Scoring::softmax) {
    // The kernel reads its operands as mutable views; it writes only dx.
    auto* y = const_cast<float*>(scores.data());
    auto* dy = const_cast<float*>(d_scores.data());
    device::softmax_backward({d_logits.rows, d_logits.cols}, host_f32(y, d_logits.rows, d_logits.cols).view,
                             host_f32(dy, d_logits.rows, d_logits.cols).view, d_logits.view);
  } else {
    float* dx = d_logits.f32();
    for (std::size_t i = 0; i < scores.size(); ++i) dx[i] = d_scores[i] * scores[i] * (1.0f - scores[i]);
  }
}

void renormalised_backward(const float* v, const float* dw, std::int64_t n, float* dv) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) sum += v[i];
  double dot = 0.0;
  for (std::int64_t i = 0; i < n; ++i) dot += static_cast<double>(dw[i]) * v[i] / sum;
  for (std::int64_t i = 0; i < n; ++i) dv[i] = static_cast<float>((dw[i] - dot) / sum);
}

}  // namespace dtrain::parallel::moe
