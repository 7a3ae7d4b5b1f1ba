#include "parallel/moe/experts.hpp"

#include <string>

#include "base/error.hpp"
#include "device/buffer.hpp"
#include "device/gemm.hpp"
#include "device/kernels.hpp"

namespace dtrain::parallel::moe {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

device::Activation activation_of(int value) {
  switch (value) {
    case 0: return device::Activation::gelu_tanh;
    case 1: return device::Activation::gelu_erf;
    case 2: return device::Activation::silu;
    default:
      invalid("activation is " + std::to_string(value) +
              "; it must be DT_MOE_GELU_TANH (0), DT_MOE_GELU_ERF (1) or DT_MOE_SILU (2)");
  }
}

// C = op(A) op(B) for one expert's block, row-major and packed.
void product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, const TensorView& a,
             const TensorView& b, const TensorView& c) {
  device::GemmShape shape;
  shape.transpose_a = transpose_a;
  shape.transpose_b = transpose_b;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  device::gemm(shape, a, b, c);
}

// Rows [first, first + n) of a matrix, and matrix l of a stack.
TensorView rows_of(const Matrix& m, std::int64_t first, std::int64_t n) {
  return m.view.slice(first * m.cols, n * m.cols);
}
TensorView matrix_of(const Matrix& stack, std::int64_t l, std::int64_t rows) { return rows_of(stack, l * rows, rows); }

// `count` floats of scratch on `queue`, overwritten before they are read.
device::Buffer scratch(device::Queue& queue, std::int64_t count) {
  return device::Buffer(queue, static_cast<std::size_t>(count) * sizeof(float), device::Buffer::Contents::unset);
}

// A rows x cols matrix of `buffer` from element `first`, ordered on `queue`.
Matrix on_queue(device::Queue& queue, const device::Buffer& buffer, std::int64_t first, std::int64_t rows,
                std::int64_t cols) {
  TensorView view = buffer.view(static_cast<std::size_t>(first) * sizeof(float), rows * cols, DType::f32);
  view.stream = queue.stream();
  return Matrix{view, rows, cols};
}

}  // namespace

ExpertBlocks read_expert_blocks(const CheckedTensor& x, const CheckedTensor& counts, const CheckedTensor& w1,
                                const CheckedTensor& w2, int activation) {
  ExpertBlocks blocks;
  blocks.activation = activation_of(activation);
  blocks.x = float_matrix(x, "x", -1, -1);
  blocks.hidden = blocks.x.cols;
  const Matrix c = index_vector(counts, "counts", -1);
  const std::int64_t experts = c.cols;
  blocks.w1 = float_stack(w1, "w1", experts, blocks.hidden, -1);
  blocks.inner = blocks.w1.cols;
  blocks.w2 = float_stack(w2, "w2", experts, blocks.inner, blocks.hidden);
  blocks.counts.assign(c.i64(), c.i64() + experts);
  std::int64_t total = 0;
  for (std::size_t l = 0; l < blocks.counts.size(); ++l) {
    if (blocks.counts[l] < 0) invalid("counts[" + std::to_string(l) + "] is negative");
    total += blocks.counts[l];
  }
  if (total != blocks.x.rows) {
    invalid("counts add up to " + std::to_string(total) + " but x has " + std::to_string(blocks.x.rows) + " rows");
  }
  return blocks;
}

void experts_forward(const ExpertBlocks& b, device::Queue& queue, const Matrix& hidden, const Matrix& y) {
  const std::int64_t h = b.hidden;
  const std::int64_t f = b.inner;
  const device::Buffer activated = scratch(queue, hidden.view.count);
  const Matrix act = on_queue(queue, activated, 0, hidden.rows, f);
  std::int64_t first = 0;
  for (std::size_t l = 0; l < b.counts.size(); ++l) {
    const std::int64_t n = b.counts[l];
    const auto expert = static_cast<std::int64_t>(l);
    if (n > 0) {
      product(false, false, n, f, h, rows_of(b.x, first, n), matrix_of(b.w1, expert, h), rows_of(hidden, first, n));
      device::activation_forward(b.activation, rows_of(hidden, first, n), rows_of(act, first, n));
      product(false, false, n, h, f, rows_of(act, first, n), matrix_of(b.w2, expert, f), rows_of(y, first, n));
    }
    first += n;
  }
}

void experts_backward(const ExpertBlocks& b, device::Queue& queue, const Matrix& hidden, const Matrix& dy,
                      const Matrix& dx, const Matrix& dw1, const Matrix& dw2) {
  const std::int64_t h = b.hidden;
  const std::int64_t f = b.inner;
  const device::Buffer buffer = scratch(queue, 2 * hidden.view.count);
  const Matrix act = on_queue(queue, buffer, 0, hidden.rows, f);
  const Matrix d_hidden = on_queue(queue, buffer, hidden.view.count, hidden.rows, f);
  std::int64_t first = 0;
  for (std::size_t l = 0; l < b.counts.size(); ++l) {
    const std::int64_t n = b.counts[l];
    const auto expert = static_cast<std::int64_t>(l);
    if (n == 0) {
      for (const TensorView& gradient : {matrix_of(dw1, expert, h), matrix_of(dw2, expert, f)}) {
        queue.zero(gradient.data, gradient.bytes());
      }
      continue;
    }
    const TensorView pre = rows_of(hidden, first, n);
    device::activation_forward(b.activation, pre, rows_of(act, first, n));
    // dW2 = act^T dY; d act = dY W2^T; d hidden = act'(hidden) * d act.
    product(true, false, f, h, n, rows_of(act, first, n), rows_of(dy, first, n), matrix_of(dw2, expert, f));
    product(false, true, n, f, h, rows_of(dy, first, n), matrix_of(b.w2, expert, f), rows_of(d_hidden, first, n));
    device::activation_backward(b.activation, pre, rows_of(d_hidden, first, n), rows_of(d_hidden, first, n));
    // dW1 = X^T d hidden; dX = d hidden W1^T.
    product(true, false, h, f, n, rows_of(b.x, first, n), rows_of(d_hidden, first, n), matrix_of(dw1, expert, h));
    product(false, true, n, h, f, rows_of(d_hidden, first, n), matrix_of(b.w1, expert, h), rows_of(dx, first, n));
    first += n;
  }
}

}  // namespace dtrain::parallel::moe
