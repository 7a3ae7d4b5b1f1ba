#include "parallel/tp/local_math.hpp"

#include <cstdint>

#include "device/buffer.hpp"
#include "device/gemm.hpp"

namespace dtrain::parallel::tp {

namespace {

// `n` ones of `dtype` (f32, f16 or bf16) in the queue's memory, as the first
// operand of a bias GEMM.
class Ones {
 public:
  Ones(device::Queue& queue, DType dtype, std::int64_t n)
      : storage_(queue, static_cast<std::size_t>(n) * dtype_size(dtype)), view_(storage_.view(0, n, dtype)) {
    queue.fill(dtype, view_.data, n, 1.0);
  }
  const TensorView& view() const { return view_; }

 private:
  device::Buffer storage_;
  TensorView view_;
};

// c = op(a) op(b) + beta c, the shape read off the operands.
void product(const Matrix& a, bool transpose_a, const Matrix& b, bool transpose_b, const Matrix& c, double beta) {
  device::GemmShape shape;
  shape.transpose_a = transpose_a;
  shape.transpose_b = transpose_b;
  shape.m = transpose_a ? a.cols : a.rows;
  shape.k = transpose_a ? a.rows : a.cols;
  shape.n = transpose_b ? b.rows : b.cols;
  shape.beta = beta;
  device::gemm(shape, a.view, b.view, c.view);
}

}  // namespace

void x_times_wt(const Matrix& x, const Matrix& w, const Matrix& y, double beta) {
  product(x, false, w, true, y, beta);
}

void dy_times_w(const Matrix& dy, const Matrix& w, const Matrix& dx, double beta) {
  product(dy, false, w, false, dx, beta);
}

void dyt_times_x(const Matrix& dy, const Matrix& x, const Matrix& dw, double beta) {
  product(dy, true, x, false, dw, beta);
}

void add_bias(device::Queue& queue, const Matrix& y, const TensorView& bias) {
  const Ones ones(queue, y.view.dtype, y.rows);
  product({ones.view(), y.rows, 1}, false, {bias, 1, y.cols}, false, y, 1.0);
}

void sum_rows(device::Queue& queue, const Matrix& dy, const TensorView& db, double beta) {
  const Ones ones(queue, dy.view.dtype, dy.rows);
  product({ones.view(), 1, dy.rows}, false, dy, false, {db, 1, dy.cols}, beta);
}

}  // namespace dtrain::parallel::tp
