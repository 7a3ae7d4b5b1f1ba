// Router scores from logits, and gradients back through them: what the
// router, its backward pass and the load-balancing loss share.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/moe/matrix.hpp"
#include "parallel/moe/options.hpp"

namespace dtrain::parallel::moe {

// s = softmax(logits) along each row, or sigmoid(logits) element-wise:
// [logits.rows, logits.cols].
std::vector<float> router_scores(Scoring scoring, const Matrix& logits);

// d_logits = d_scores * d s / d logits (overwritten), from the scores s
// router_scores() returned.
void scores_backward(Scoring scoring, const std::vector<float>& scores, const std::vector<float>& d_scores,
                     const Matrix& d_logits);

// For w = v / sum(v) over n values: the gradient with respect to v from the
// gradient with respect to w, dv_j = (dw_j - sum_i dw_i w_i) / sum(v).
// `dv` may be `dw`.
void renormalised_backward(const float* v, const float* dw, std::int64_t n, float* dv);

}  // namespace dtrain::parallel::moe
