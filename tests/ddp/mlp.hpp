// A two-layer perceptron with its own forward and backward, in f32: the
// model the equivalence tests train, once in one process on the whole batch
// and once on N ranks with a share each.
//
// loss(x, y) = 0.5 * |W2 tanh(W1 x + b1) + b2 - y|^2 per sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace dtrain::test {

struct Batch {
  static constexpr int kIn = 6;
  static constexpr int kOut = 3;
  std::vector<float> x;  // [n, kIn]
  std::vector<float> y;  // [n, kOut]
  std::size_t size() const { return x.size() / kIn; }

  // `n` samples drawn from a fixed teacher function, reproducibly from `seed`.
  static Batch make(std::size_t n, unsigned seed);
  // Samples [first, first + n).
  Batch slice(std::size_t first, std::size_t n) const;
};

class Mlp {
 public:
  static constexpr int kHidden = 10;
  // Parameters in registration order: w1 [kHidden, kIn], b1 [kHidden],
  // w2 [kOut, kHidden], b2 [kOut].
  static std::vector<std::vector<std::int64_t>> shapes();

  // Random initial parameters from `seed`; gradients zero.
  explicit Mlp(unsigned seed);

  std::vector<std::vector<float>> params;
  std::vector<std::vector<float>> grads;

  // Adds `scale` times the gradient of the summed loss over `batch` to
  // grads. Calls `ready(i)` as soon as gradient i is final, last layer
  // first (3, 2, 1, 0), as an autograd hook would.
  void accumulate(const Batch& batch, float scale, const std::function<void(std::size_t)>& ready = {});
  void zero_grad();
  void sgd(float lr);
};

// max |a - b| / max |b| over all parameters.
double relative_error(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b);

}  // namespace dtrain::test
