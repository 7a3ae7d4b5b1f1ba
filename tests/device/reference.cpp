#include "reference.hpp"

#include <algorithm>
#include <cmath>

namespace dtrain::test {

SoftmaxResult softmax_reference(device::RowShape shape, const Values& x) {
  SoftmaxResult r{Values(x.size()), Values(static_cast<std::size_t>(shape.rows))};
  for (std::int64_t i = 0; i < shape.rows; ++i) {
    const double* row = x.data() + i * shape.cols;
    const double max = *std::max_element(row, row + shape.cols);
    double sum = 0;
    for (std::int64_t j = 0; j < shape.cols; ++j) sum += std::exp(row[j] - max);
    for (std::int64_t j = 0; j < shape.cols; ++j) r.y[i * shape.cols + j] = std::exp(row[j] - max) / sum;
    r.lse[i] = max + std::log(sum);
  }
  return r;
}

double activation_reference(device::Activation kind, double x) {
  const double pi = std::acos(-1.0);
  switch (kind) {
    case device::Activation::gelu_tanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
    case device::Activation::gelu_erf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case device::Activation::silu: return x / (1 + std::exp(-x));
  }
  return x;
}

NormResult norm_reference(device::RowShape shape, double eps, bool centred, const Values& x, const Values& gamma,
                          const Values& beta) {
  NormResult r{Values(x.size()), Values(static_cast<std::size_t>(shape.rows)),
               Values(static_cast<std::size_t>(shape.rows))};
  const double n = static_cast<double>(shape.cols);
  for (std::int64_t i = 0; i < shape.rows; ++i) {
    const double* row = x.data() + i * shape.cols;
    double mean = 0;
    if (centred) {
      for (std::int64_t j = 0; j < shape.cols; ++j) mean += row[j];
      mean /= n;
    }
    double squares = 0;
    for (std::int64_t j = 0; j < shape.cols; ++j) squares += (row[j] - mean) * (row[j] - mean);
    const double rstd = 1 / std::sqrt(squares / n + eps);
    for (std::int64_t j = 0; j < shape.cols; ++j) {
      r.y[i * shape.cols + j] = (row[j] - mean) * rstd * gamma[j] + (centred ? beta[j] : 0.0);
    }
    r.mean[i] = mean;
    r.rstd[i] = rstd;
  }
  return r;
}

Values numeric_gradient(const std::function<Values(const Values&)>& f, Values v, const Values& dy) {
  const double step = 1e-5;
  auto loss = [&](const Values& at) {
    const Values y = f(at);
    double sum = 0;
    for (std::size_t i = 0; i < y.size(); ++i) sum += dy[i] * y[i];
    return sum;
  };
  Values gradient(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double kept = v[i];
    v[i] = kept + step;
    const double up = loss(v);
    v[i] = kept - step;
    const double down = loss(v);
    v[i] = kept;
    gradient[i] = (up - down) / (2 * step);
  }
  return gradient;
}

double largest(const Values& values) {
  double m = 0;
  for (double v : values) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace dtrain::test
