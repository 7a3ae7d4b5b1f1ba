// The local products of the parallel linear layers, on the device layer's
// GEMM, in the layers' own terms. Weights are [out, in] as nn.Linear stores
// them. `beta` 0 overwrites the result, 1 adds to it (gradient
// accumulation). Bias terms are products with a vector of ones (in the
// queue's memory), so that they run wherever the GEMM runs and in every dtype
// it takes.
#pragma once

#include "device/queue.hpp"
#include "parallel/tp/matrix.hpp"

namespace dtrain::parallel::tp {

// y [T, out] = x [T, in] w^T + beta y
void x_times_wt(const Matrix& x, const Matrix& w, const Matrix& y, double beta);
// dx [T, in] = dy [T, out] w + beta dx
void dy_times_w(const Matrix& dy, const Matrix& w, const Matrix& dx, double beta);
// dw [out, in] = dy^T x + beta dw
void dyt_times_x(const Matrix& dy, const Matrix& x, const Matrix& dw, double beta);
// y [T, out] += bias [out] on every row.
void add_bias(device::Queue& queue, const Matrix& y, const TensorView& bias);
// db [out] = sum over the rows of dy [T, out] + beta db
void sum_rows(device::Queue& queue, const Matrix& dy, const TensorView& db, double beta);

}  // namespace dtrain::parallel::tp
