// Test helper: an MoE router written out in double from the formulas in
// dtrain/moe.h, independently of the library (sorting instead of a top-k
// kernel, its own softmax and capacity rule), and the small tools the MoE
// tests share: deterministic data, host tensors of any shape, numerical
// gradients and a relative comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include "common/host_tensor.hpp"
#include "dtrain.h"

namespace dtrain::testing::moe {

// Uniform numbers in [-1, 1) from a seed, the same in every process.
class Numbers {
 public:
  explicit Numbers(std::uint64_t seed) : state_(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  double next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) / static_cast<double>(1ULL << 53) * 2.0 - 1.0;
  }
  std::vector<double> take(std::size_t n, double scale = 1.0) {
    std::vector<double> v(n);
    for (double& x : v) x = scale * next();
    return v;
  }

 private:
  std::uint64_t state_;
};

// A host array with a DLTensor of any shape.
template <typename T>
struct Array : HostTensor<T> {
  Array(std::vector<std::int64_t> dims, T fill = T{})
      : HostTensor<T>(static_cast<std::size_t>(std::accumulate(dims.begin(), dims.end(), std::int64_t{1},
                                                               std::multiplies<>())),
                      fill) {
    this->shape = std::move(dims);
    this->tensor.shape = this->shape.data();
    this->tensor.ndim = static_cast<int>(this->shape.size());
  }
  template <typename U>
  Array(std::vector<std::int64_t> dims, const std::vector<U>& from) : Array(std::move(dims)) {
    for (std::size_t i = 0; i < from.size(); ++i) this->values[i] = static_cast<T>(from[i]);
  }
};

struct RouterSpec {
  int experts = 4;
  int k = 1;
  dt_moe_scoring scoring = DT_MOE_SOFTMAX;
  bool normalize = false;
  double capacity_factor = 0.0;
  dt_moe_drop_policy drop = DT_MOE_DROP_BY_POSITION;

  dt_moe_options options() const {
    dt_moe_options o = DT_MOE_OPTIONS_INIT;
    o.num_experts = experts;
    o.top_k = k;
    o.scoring = scoring;
    o.normalize = normalize ? 1 : 0;
    o.capacity_factor = capacity_factor;
    o.drop_policy = drop;
    return o;
  }
};

inline std::vector<double> scores_of(const RouterSpec& spec, const double* logits) {
  std::vector<double> s(static_cast<std::size_t>(spec.experts));
  if (spec.scoring == DT_MOE_SIGMOID) {
    for (int e = 0; e < spec.experts; ++e) s[e] = 1.0 / (1.0 + std::exp(-logits[e]));
    return s;
  }
  const double top = *std::max_element(logits, logits + spec.experts);
  double sum = 0.0;
  for (int e = 0; e < spec.experts; ++e) sum += s[e] = std::exp(logits[e] - top);
  for (double& x : s) x /= sum;
  return s;
}

// The k experts of a row of scores, highest first, ties to the lower index.
inline std::vector<int> chosen_of(const RouterSpec& spec, const std::vector<double>& scores) {
  std::vector<int> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return scores[a] > scores[b]; });
  order.resize(static_cast<std::size_t>(spec.k));
  return order;
}

inline std::vector<double> weights_of(const RouterSpec& spec, const double* logits, const std::vector<int>& chosen) {
  const std::vector<double> s = scores_of(spec, logits);
  std::vector<double> w;
  double sum = 0.0;
  for (int e : chosen) sum += s[e];
  for (int e : chosen) w.push_back(spec.normalize ? s[e] / sum : s[e]);
  return w;
}

struct Routed {
  std::vector<double> weights;        // [T, k]
  std::vector<std::int64_t> experts;  // [T, k], -1 where dropped
  std::vector<int> chosen;            // [T, k] before dropping
  std::int64_t dropped = 0;
};

inline Routed route_reference(const RouterSpec& spec, const std::vector<double>& logits, std::int64_t tokens) {
  Routed r;
  std::vector<std::vector<double>> scores;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double* row = &logits[static_cast<std::size_t>(t * spec.experts)];
    scores.push_back(scores_of(spec, row));
    const std::vector<int> chosen = chosen_of(spec, scores.back());
    const std::vector<double> w = weights_of(spec, row, chosen);
    for (int j = 0; j < spec.k; ++j) {
      r.chosen.push_back(chosen[j]);
      r.experts.push_back(chosen[j]);
      r.weights.push_back(w[j]);
    }
  }
  if (spec.capacity_factor <= 0) return r;
  const auto capacity = static_cast<std::int64_t>(std::ceil(spec.capacity_factor * tokens * spec.k / spec.experts));
  for (int e = 0; e < spec.experts; ++e) {
    std::vector<std::size_t> pairs;  // in token order
    for (std::size_t p = 0; p < r.experts.size(); ++p) {
      if (r.experts[p] == e) pairs.push_back(p);
    }
    if (spec.drop == DT_MOE_DROP_BY_SCORE) {
      std::stable_sort(pairs.begin(), pairs.end(), [&](std::size_t a, std::size_t b) {
        return scores[a / spec.k][e] > scores[b / spec.k][e];
      });
    }
    for (std::size_t i = static_cast<std::size_t>(std::max<std::int64_t>(capacity, 0)); i < pairs.size(); ++i) {
      r.experts[pairs[i]] = -1;
      ++r.dropped;
    }
  }
  return r;
}

// d f / d x by central differences.
inline std::vector<double> numeric_gradient(const std::function<double(const std::vector<double>&)>& f,
                                            std::vector<double> x) {
  std::vector<double> g(x.size());
  const double h = 1e-6;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = f(x);
    x[i] = keep - h;
    const double down = f(x);
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// Every element within `tolerance` times the largest magnitude of `expected` (at least 1e-30).
template <typename T>
void expect_close(const std::vector<T>& actual, const std::vector<double>& expected, double tolerance,
                  const char* what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double scale = 1e-30;
  for (double v : expected) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(actual[i]), expected[i], tolerance * scale) << what << "[" << i << "]";
  }
}

}  // namespace dtrain::testing::moe
