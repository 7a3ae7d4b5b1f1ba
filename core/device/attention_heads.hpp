// What the CPU and CUDA blockwise attention (device/attention.hpp) share:
// one head's matrix inside the [rows, heads, head_dim] arrays, and the
// products on such matrices through the device layer's GEMM.
#pragma once

#include <cstdint>

#include "base/tensor.hpp"
#include "device/attention.hpp"

namespace dtrain::device {

// A row-major float matrix: its first element and row stride.
struct Matrix {
  const float* first;
  std::int64_t ld;
};

inline Matrix from_row(Matrix m, std::int64_t row) { return {m.first + row * m.ld, m.ld}; }

// Where head h's rows are in the [rows, heads, head_dim] arrays.
struct Heads {
  const AttentionShape& shape;

  std::int64_t q_ld() const { return shape.q_heads * shape.head_dim; }
  std::int64_t kv_ld() const { return shape.kv_heads * shape.head_dim; }
  Matrix q(const float* base, std::int64_t h) const { return {base + h * shape.head_dim, q_ld()}; }
  // The key/value head that query head h attends with.
  Matrix kv(const float* base, std::int64_t h) const {
    return {base + h / (shape.q_heads / shape.kv_heads) * shape.head_dim, kv_ld()};
  }
};

// C = alpha * op(A) op(B) + beta * C (device/gemm.hpp), with op(A) m x k,
// op(B) k x n and C m x n, in the memory and on the stream of `place`
// (host memory for a default view).
void product(const TensorView& place, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
             std::int64_t k, double alpha, Matrix a, Matrix b, double beta, Matrix c);

}  // namespace dtrain::device
