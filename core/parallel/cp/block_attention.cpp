#include "parallel/cp/block_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dtrain::parallel::cp {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// Element offsets into the [rows, heads, head_dim] and [rows, heads] arrays.
struct Strides {
  std::int64_t q_row, kv_row, head_dim, group;

  explicit Strides(const AttentionShape& s)
      : q_row(s.q_heads * s.head_dim), kv_row(s.kv_heads * s.head_dim), head_dim(s.head_dim),
        group(s.q_heads / s.kv_heads) {}
  std::int64_t q(std::int64_t row, std::int64_t head) const { return row * q_row + head * head_dim; }
  std::int64_t kv(std::int64_t row, std::int64_t q_head) const { return row * kv_row + (q_head / group) * head_dim; }
};

bool visible(const AttentionShape& shape, BlockPositions positions, std::int64_t i, std::int64_t j) {
  return !shape.causal || positions.k[j] <= positions.q[i];
}

double dot(const float* a, const float* b, std::int64_t n) {
  double sum = 0.0;
  for (std::int64_t c = 0; c < n; ++c) sum += static_cast<double>(a[c]) * static_cast<double>(b[c]);
  return sum;
}

// The scaled scores of query row i, head h, against every key (-inf where
// hidden), and their log-sum-exp.
double scores_of(const AttentionShape& shape, const Strides& at, const float* q, const float* k,
                 BlockPositions positions, std::int64_t i, std::int64_t h, std::vector<double>& scores) {
  double max_score = kMinusInfinity;
  for (std::int64_t j = 0; j < shape.kv_rows; ++j) {
    double score = kMinusInfinity;
    if (visible(shape, positions, i, j)) {
      score = shape.scale * dot(q + at.q(i, h), k + at.kv(j, h), shape.head_dim);
      max_score = std::max(max_score, score);
    }
    scores[static_cast<std::size_t>(j)] = score;
  }
  if (max_score == kMinusInfinity) return kMinusInfinity;
  double sum = 0.0;
  for (double score : scores) sum += std::exp(score - max_score);
  return max_score + std::log(sum);
}

}  // namespace

void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                       BlockPositions positions, float* o, float* lse) {
  const Strides at(shape);
  std::vector<double> scores(static_cast<std::size_t>(shape.kv_rows));
  std::vector<double> out(static_cast<std::size_t>(shape.head_dim));
  for (std::int64_t i = 0; i < shape.q_rows; ++i) {
    for (std::int64_t h = 0; h < shape.q_heads; ++h) {
      const double row_lse = scores_of(shape, at, q, k, positions, i, h, scores);
      std::fill(out.begin(), out.end(), 0.0);
      if (row_lse != kMinusInfinity) {
        for (std::int64_t j = 0; j < shape.kv_rows; ++j) {
          const double p = std::exp(scores[static_cast<std::size_t>(j)] - row_lse);
          if (p == 0.0) continue;
          const float* v_row = v + at.kv(j, h);
          for (std::int64_t c = 0; c < shape.head_dim; ++c) out[static_cast<std::size_t>(c)] += p * v_row[c];
        }
      }
      float* o_row = o + at.q(i, h);
      for (std::int64_t c = 0; c < shape.head_dim; ++c) o_row[c] = static_cast<float>(out[static_cast<std::size_t>(c)]);
      lse[i * shape.q_heads + h] = static_cast<float>(row_lse);
    }
  }
}

void merge_attention(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o, float* lse,
                     const float* o_other, const float* lse_other) {
  for (std::int64_t r = 0; r < rows * heads; ++r) {
    const double a = lse[r];
    const double b = lse_other[r];
    float* o_row = o + r * head_dim;
    const float* other_row = o_other + r * head_dim;
    if (a == kMinusInfinity && b == kMinusInfinity) {
      std::fill(o_row, o_row + head_dim, 0.0F);
      continue;
    }
    const double top = std::max(a, b);
    const double merged = top + std::log(std::exp(a - top) + std::exp(b - top));
    const double wa = std::exp(a - merged);
    const double wb = std::exp(b - merged);
    for (std::int64_t c = 0; c < head_dim; ++c) {
      o_row[c] = static_cast<float>(wa * o_row[c] + wb * other_row[c]);
    }
    lse[r] = static_cast<float>(merged);
  }
}

void output_gradient_dot(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, const float* d_o,
                         const float* o, float* delta) {
  for (std::int64_t r = 0; r < rows * heads; ++r) {
    delta[r] = static_cast<float>(dot(d_o + r * head_dim, o + r * head_dim, head_dim));
  }
}

void attention_backward(const AttentionShape& shape, const BackwardInputs& in, BlockPositions positions, float* dq,
                        float* dk, float* dv) {
  const Strides at(shape);
  std::vector<double> dq_row(static_cast<std::size_t>(shape.head_dim));
  // dk and dv gather a term from every query: summed in double here, added
  // to the caller's float arrays once.
  const auto kv_count = static_cast<std::size_t>(shape.kv_rows * at.kv_row);
  std::vector<double> dk_sum(kv_count, 0.0);
  std::vector<double> dv_sum(kv_count, 0.0);
  for (std::int64_t i = 0; i < shape.q_rows; ++i) {
    for (std::int64_t h = 0; h < shape.q_heads; ++h) {
      const double row_lse = in.lse[i * shape.q_heads + h];
      if (row_lse == kMinusInfinity) continue;  // the query saw no key anywhere
      const double row_delta = in.delta[i * shape.q_heads + h];
      const float* q_row = in.q + at.q(i, h);
      const float* d_o_row = in.d_o + at.q(i, h);
      std::fill(dq_row.begin(), dq_row.end(), 0.0);
      for (std::int64_t j = 0; j < shape.kv_rows; ++j) {
        if (!visible(shape, positions, i, j)) continue;
        const float* k_row = in.k + at.kv(j, h);
        const float* v_row = in.v + at.kv(j, h);
        const double p = std::exp(shape.scale * dot(q_row, k_row, shape.head_dim) - row_lse);
        const double ds = p * (dot(d_o_row, v_row, shape.head_dim) - row_delta) * shape.scale;
        double* dk_row = dk_sum.data() + at.kv(j, h);
        double* dv_row = dv_sum.data() + at.kv(j, h);
        for (std::int64_t c = 0; c < shape.head_dim; ++c) {
          dq_row[static_cast<std::size_t>(c)] += ds * k_row[c];
          dk_row[c] += ds * q_row[c];
          dv_row[c] += p * d_o_row[c];
        }
      }
      float* dq_out = dq + at.q(i, h);
      for (std::int64_t c = 0; c < shape.head_dim; ++c) {
        dq_out[c] += static_cast<float>(dq_row[static_cast<std::size_t>(c)]);
      }
    }
  }
  for (std::size_t e = 0; e < kv_count; ++e) {
    dk[e] += static_cast<float>(dk_sum[e]);
    dv[e] += static_cast<float>(dv_sum[e]);
  }
}

}  // namespace dtrain::parallel::cp
