#include "device/attention_heads.hpp"

#include "device/gemm.hpp"

namespace dtrain::device {

void product(const TensorView& place, bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n,
             std::int64_t k, double alpha, Matrix a, Matrix b, double beta, Matrix c) {
  // The elements from a matrix's first to its last.
  auto view = [&](Matrix x, std::int64_t rows, std::int64_t cols) {
    TensorView v = place;
    v.data = const_cast<float*>(x.first);
    v.count = rows == 0 || cols == 0 ? 0 : (rows - 1) * x.ld + cols;
    v.dtype = DType::f32;
    return v;
  };
  GemmShape shape;
  shape.transpose_a = transpose_a;
  shape.transpose_b = transpose_b;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.lda = a.ld;
  shape.ldb = b.ld;
  shape.ldc = c.ld;
  shape.alpha = alpha;
  shape.beta = beta;
  gemm(shape, view(a, transpose_a ? k : m, transpose_a ? m : k), view(b, transpose_b ? n : k, transpose_b ? k : n),
       view(c, m, n));
}

}  // namespace dtrain::device
