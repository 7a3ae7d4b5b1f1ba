// Layer norm and RMS norm, forward and backward (device/kernel_args.hpp):
// one body for both, RMS norm being layer norm without the centring.
#include <cmath>
#include <vector>

#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

template <typename E>
void forward(const NormArgs& a) {
  using Bits = typename E::Bits;
  const auto* x = static_cast<const Bits*>(a.x);
  const auto* gamma = static_cast<const Bits*>(a.gamma);
  const auto* beta = static_cast<const Bits*>(a.beta);
  auto* y = static_cast<Bits*>(a.y);
  const bool centred = beta != nullptr;
  const std::int64_t n = a.shape.cols;
  std::vector<float> row(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < a.shape.rows; ++r) {
    float sum = 0.0f;
    for (std::int64_t j = 0; j < n; ++j) {
      row[j] = E::load(x[r * n + j]);
      sum += row[j];
    }
    const float mean = centred ? sum / static_cast<float>(n) : 0.0f;
    // Two passes (the mean first) so the variance does not lose its digits
    // to a large mean.
    float squares = 0.0f;
    for (std::int64_t j = 0; j < n; ++j) squares += (row[j] - mean) * (row[j] - mean);
    const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + a.eps);
    for (std::int64_t j = 0; j < n; ++j) {
      const float scaled = (row[j] - mean) * rstd * E::load(gamma[j]);
      y[r * n + j] = E::store(centred ? scaled + E::load(beta[j]) : scaled);
    }
    if (centred) a.mean[r] = mean;
    a.rstd[r] = rstd;
  }
}

template <typename E>
void backward(const NormBackwardArgs& a) {
  using Bits = typename E::Bits;
  const auto* x = static_cast<const Bits*>(a.x);
  const auto* gamma = static_cast<const Bits*>(a.gamma);
  const auto* dy = static_cast<const Bits*>(a.dy);
  auto* dx = static_cast<Bits*>(a.dx);
  const bool centred = a.mean != nullptr;
  const std::int64_t n = a.shape.cols;
  std::vector<float> xhat(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(n));
  std::vector<float> dgamma(static_cast<std::size_t>(n), 0.0f), dbeta(static_cast<std::size_t>(n), 0.0f);
  for (std::int64_t r = 0; r < a.shape.rows; ++r) {
    const float mean = centred ? a.mean[r] : 0.0f;
    const float rstd = a.rstd[r];
    float g_sum = 0.0f, g_xhat_sum = 0.0f;
    for (std::int64_t j = 0; j < n; ++j) {
      const float d = E::load(dy[r * n + j]);
      xhat[j] = (E::load(x[r * n + j]) - mean) * rstd;
      g[j] = d * E::load(gamma[j]);
      g_sum += g[j];
      g_xhat_sum += g[j] * xhat[j];
      dgamma[j] += d * xhat[j];
      dbeta[j] += d;
    }
    const float g_mean = centred ? g_sum / static_cast<float>(n) : 0.0f;
    const float g_xhat_mean = g_xhat_sum / static_cast<float>(n);
    for (std::int64_t j = 0; j < n; ++j) dx[r * n + j] = E::store(rstd * (g[j] - g_mean - xhat[j] * g_xhat_mean));
  }
  auto* dgamma_out = static_cast<Bits*>(a.dgamma);
  auto* dbeta_out = static_cast<Bits*>(a.dbeta);
  for (std::int64_t j = 0; j < n; ++j) {
    dgamma_out[j] = E::store(dgamma[j]);
    if (centred) dbeta_out[j] = E::store(dbeta[j]);
  }
}

}  // namespace

void norm_forward(const NormArgs& args) {
  with_element(args.dtype, "norm", [&](auto e) { forward<decltype(e)>(args); });
}

void norm_backward(const NormBackwardArgs& args) {
  with_element(args.dtype, "norm_backward", [&](auto e) { backward<decltype(e)>(args); });
}

}  // namespace dtrain::device::cpu
