#include "mlp.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace dtrain::test {

namespace {

constexpr int kIn = Batch::kIn;
constexpr int kOut = Batch::kOut;
constexpr int kHidden = Mlp::kHidden;

float uniform(std::mt19937& rng, float scale) {
  return scale * (static_cast<float>(rng() % 2001u) / 1000.0f - 1.0f);
}

}  // namespace

Batch Batch::make(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  Batch batch;
  for (std::size_t s = 0; s < n; ++s) {
    float sum = 0;
    for (int i = 0; i < kIn; ++i) {
      batch.x.push_back(uniform(rng, 1.0f));
      sum += batch.x.back() * static_cast<float>(i + 1);
    }
    for (int o = 0; o < kOut; ++o) batch.y.push_back(std::sin(sum * 0.3f + static_cast<float>(o)));
  }
  return batch;
}

Batch Batch::slice(std::size_t first, std::size_t n) const {
  Batch part;
  part.x.assign(x.begin() + static_cast<std::ptrdiff_t>(first * kIn),
                x.begin() + static_cast<std::ptrdiff_t>((first + n) * kIn));
  part.y.assign(y.begin() + static_cast<std::ptrdiff_t>(first * kOut),
                y.begin() + static_cast<std::ptrdiff_t>((first + n) * kOut));
  return part;
}

std::vector<std::vector<std::int64_t>> Mlp::shapes() {
  return {{kHidden, kIn}, {kHidden}, {kOut, kHidden}, {kOut}};
}

Mlp::Mlp(unsigned seed) {
  std::mt19937 rng(seed);
  for (const auto& shape : shapes()) {
    std::int64_t count = 1;
    for (std::int64_t extent : shape) count *= extent;
    std::vector<float> p(static_cast<std::size_t>(count));
    for (float& v : p) v = uniform(rng, 0.5f);
    params.push_back(std::move(p));
    grads.emplace_back(static_cast<std::size_t>(count), 0.0f);
  }
}

void Mlp::accumulate(const Batch& batch, float scale, const std::function<void(std::size_t)>& ready) {
  const auto& w1 = params[0];
  const auto& b1 = params[1];
  const auto& w2 = params[2];
  const auto& b2 = params[3];
  const std::size_t n = batch.size();
  std::vector<float> h(n * kHidden);
  std::vector<float> dh(n * kHidden, 0.0f);

  // Forward, then the last layer's gradients.
  for (std::size_t s = 0; s < n; ++s) {
    const float* x = &batch.x[s * kIn];
    float* hs = &h[s * kHidden];
    for (int j = 0; j < kHidden; ++j) {
      float z = b1[j];
      for (int i = 0; i < kIn; ++i) z += w1[j * kIn + i] * x[i];
      hs[j] = std::tanh(z);
    }
    for (int o = 0; o < kOut; ++o) {
      float out = b2[o];
      for (int j = 0; j < kHidden; ++j) out += w2[o * kHidden + j] * hs[j];
      const float d = out - batch.y[s * kOut + o];
      grads[3][o] += scale * d;
      for (int j = 0; j < kHidden; ++j) {
        grads[2][o * kHidden + j] += scale * d * hs[j];
        dh[s * kHidden + j] += d * w2[o * kHidden + j];
      }
    }
  }
  if (ready) ready(3);
  if (ready) ready(2);

  // The first layer's.
  for (std::size_t s = 0; s < n; ++s) {
    const float* x = &batch.x[s * kIn];
    for (int j = 0; j < kHidden; ++j) {
      const float hs = h[s * kHidden + j];
      const float dz = dh[s * kHidden + j] * (1.0f - hs * hs);
      grads[1][j] += scale * dz;
      for (int i = 0; i < kIn; ++i) grads[0][j * kIn + i] += scale * dz * x[i];
    }
  }
  if (ready) ready(1);
  if (ready) ready(0);
}

void Mlp::zero_grad() {
  for (auto& g : grads) std::fill(g.begin(), g.end(), 0.0f);
}

void Mlp::sgd(float lr) {
  for (std::size_t t = 0; t < params.size(); ++t) {
    for (std::size_t i = 0; i < params[t].size(); ++i) params[t][i] -= lr * grads[t][i];
  }
}

double relative_error(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double diff = 0;
  double scale = 0;
  for (std::size_t t = 0; t < a.size(); ++t) {
    for (std::size_t i = 0; i < a[t].size(); ++i) {
      if (!std::isfinite(a[t][i])) return INFINITY;
      diff = std::max(diff, std::fabs(static_cast<double>(a[t][i]) - b[t][i]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[t][i])));
    }
  }
  return diff / scale;
}

}  // namespace dtrain::test
