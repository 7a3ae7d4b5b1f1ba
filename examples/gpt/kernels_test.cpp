// The GPT's own kernels against finite differences: each backward must give
// the gradient of sum(w * forward(x)) for a random w, input by input.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "kernels.hpp"
#include "text.hpp"

namespace {

std::vector<float> random_vector(size_t n, uint64_t key) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (float)((double)(gpt::mix64(key + i) >> 11) / 9007199254740992.0 * 2 - 1);
  return v;
}

// Checks `analytic` (d loss / d x) against central differences of `loss`.
void expect_gradient(std::vector<float> &x, const std::vector<float> &analytic,
                     const std::function<double()> &loss) {
  const float h = 1e-2f;
  for (size_t i = 0; i < x.size(); ++i) {
    float keep = x[i];
    x[i] = keep + h;
    double up = loss();
    x[i] = keep - h;
    double down = loss();
    x[i] = keep;
    double numeric = (up - down) / (2 * h);
    EXPECT_NEAR(analytic[i], numeric, 2e-3 + 2e-2 * std::fabs(numeric)) << "element " << i;
  }
}

double dot(const std::vector<float> &a, const std::vector<float> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double)a[i] * b[i];
  return s;
}

TEST(GptKernels, AttentionBackwardIsTheGradient) {
  const int64_t seqs = 2, len = 5, heads = 2, dim = 3, width = heads * dim;
  std::vector<float> qkv = random_vector((size_t)(seqs * len * 3 * width), 1);
  std::vector<float> w = random_vector((size_t)(seqs * len * width), 2);
  std::vector<float> out(w.size()), probs((size_t)(seqs * heads * len * len)), dqkv(qkv.size());
  auto loss = [&] {
    gpt::attention_forward(qkv.data(), out.data(), probs.data(), seqs, len, heads, dim);
    return dot(out, w);
  };
  loss();
  gpt::attention_backward(qkv.data(), probs.data(), w.data(), dqkv.data(), seqs, len, heads, dim);
  expect_gradient(qkv, dqkv, loss);
}

TEST(GptKernels, AttentionIsCausal) {
  // Changing the last token's keys and values leaves every earlier output alone.
  const int64_t len = 4, heads = 1, dim = 2;
  std::vector<float> qkv = random_vector((size_t)(len * 3 * dim), 3), a((size_t)(len * dim)), b(a.size());
  std::vector<float> probs((size_t)(len * len));
  gpt::attention_forward(qkv.data(), a.data(), probs.data(), 1, len, heads, dim);
  for (int64_t c = dim; c < 3 * dim; ++c) qkv[(size_t)((len - 1) * 3 * dim + c)] += 1.0f;
  gpt::attention_forward(qkv.data(), b.data(), probs.data(), 1, len, heads, dim);
  for (int64_t i = 0; i < (len - 1) * dim; ++i) EXPECT_EQ(a[(size_t)i], b[(size_t)i]);
  EXPECT_NE(a[(size_t)((len - 1) * dim)], b[(size_t)((len - 1) * dim)]);
}

TEST(GptKernels, LayerNormBackwardIsTheGradient) {
  const int64_t rows = 3, cols = 6;
  std::vector<float> x = random_vector((size_t)(rows * cols), 4), g = random_vector((size_t)cols, 5),
                     b = random_vector((size_t)cols, 6), w = random_vector(x.size(), 7);
  std::vector<float> y(x.size()), mean((size_t)rows), rstd((size_t)rows);
  auto loss = [&] {
    gpt::layernorm_forward(x.data(), g.data(), b.data(), y.data(), mean.data(), rstd.data(), rows, cols);
    return dot(y, w);
  };
  loss();
  std::vector<float> dx(x.size(), 0.0f), dg((size_t)cols, 0.0f), db((size_t)cols, 0.0f);
  gpt::layernorm_backward(x.data(), mean.data(), rstd.data(), g.data(), w.data(), dx.data(), dg.data(), db.data(),
                          rows, cols);
  expect_gradient(x, dx, loss);
  expect_gradient(g, dg, loss);
  expect_gradient(b, db, loss);
}

TEST(GptKernels, GeluBackwardIsTheGradient) {
  std::vector<float> x = random_vector(16, 8), w = random_vector(16, 9), y(16), dx(16);
  for (float &v : x) v *= 3.0f;
  auto loss = [&] {
    gpt::gelu_forward(x.data(), y.data(), 16);
    return dot(y, w);
  };
  gpt::gelu_backward(x.data(), w.data(), dx.data(), 16);
  expect_gradient(x, dx, loss);
}

}  // namespace
