#include "parallel/tp/local_math.hpp"

#include <cstdint>
#include <vector>

#include "device/gemm.hpp"

namespace dtrain::parallel::tp {

namespace {

// `n` ones of `dtype` (f32, f16 or bf16), as the first operand of a bias GEMM.
class Ones {
 public:
  Ones(DType dtype, std::int64_t n) {
    if (dtype == DType::f32) {
      floats_.assign(static_cast<std::size_t>(n), 1.0f);
      view_.data = floats_.data();
    } else {
      // 1.0 as f16 is 0x3C00, as bf16 0x3F80.
      halves_.assign(static_cast<std::size_t>(n), dtype == DType::f16 ? 0x3C00 : 0x3F80);
      view_.data = halves_.data();
    }
    view_.count = n;
    view_.dtype = dtype;
  }
  const TensorView& view() const { return view_; }

 private:
  std::vector<float> floats_;
  std::vector<std::uint16_t> halves_;
  TensorView view_;
};


}  // namespace

void x_times_wt(const Matrix& x, const Matrix& w, const Matrix& y, double beta) {
  device::GemmShape shape;
  shape.transpose_b = true;
  shape.m = x.rows;
  shape.k = x.cols;
  shape.n = w.rows;
  shape.beta = beta;
  device::gemm(shape, x.view, w.view, y.view);
}

void dy_times_w(const Matrix& dy, const Matrix& w, const Matrix& dx, double beta) {
  device::GemmShape shape;
  shape.m = dy.rows;
  shape.k = dy.cols;
  shape.n = w.cols;
  shape.beta = beta;
  device::gemm(shape, dy.view, w.view, dx.view);
}

void dyt_times_x(const Matrix& dy, const Matrix& x, const Matrix& dw, double beta) {
  device::GemmShape shape;
  shape.transpose_a = true;
  shape.m = dy.cols;
  shape.k = dy.rows;
  shape.n = x.cols;
  shape.beta = beta;
  device::gemm(shape, dy.view, x.view, dw.view);
}

void add_bias(const Matrix& y, const TensorView& bias) {
  const Ones ones(y.view.dtype, y.rows);
  device::GemmShape shape;
  shape.m = y.rows;
  shape.k = 1;
  shape.n = y.cols;
  shape.beta = 1.0;
  device::gemm(shape, ones.view(), bias, y.view);
}

void sum_rows(const Matrix& dy, const TensorView& db, double beta) {
  const Ones ones(dy.view.dtype, dy.rows);
  device::GemmShape shape;
  shape.m = 1;
  shape.k = dy.rows;
  shape.n = dy.cols;
  shape.beta = beta;
  device::gemm(shape, ones.view(), dy.view, db);
}

}  // namespace dtrain::parallel::tp
