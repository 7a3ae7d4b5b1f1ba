#include "parallel/cp/block_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/tensor.hpp"
#include "device/gemm.hpp"

namespace dtrain::parallel::cp {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// A row-major float matrix in host memory: its first element and row stride.
struct Matrix {
  const float* first;
  std::int64_t ld;
};

// C = alpha * op(A) op(B) + beta * C on the device layer (OpenBLAS), with
// op(A) m x k, op(B) k x n, C m x n (device/gemm.hpp).
void product(bool transpose_a, bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
             Matrix a, Matrix b, double beta, Matrix c) {
  auto view = [](Matrix x, std::int64_t rows, std::int64_t cols) {
    TensorView v;
    v.data = const_cast<float*>(x.first);
    v.count = rows == 0 || cols == 0 ? 0 : (rows - 1) * x.ld + cols;
    v.dtype = DType::f32;
    return v;
  };
  device::GemmShape shape;
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
  device::gemm(shape, view(a, transpose_a ? k : m, transpose_a ? m : k),
               view(b, transpose_b ? n : k, transpose_b ? k : n), view(c, m, n));
}

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

bool visible(const AttentionShape& shape, BlockPositions positions, std::int64_t i, std::int64_t j) {
  return !shape.causal || positions.k[j] <= positions.q[i];
}

// Causal and every key after every query: the block adds nothing, which the
// contiguous layout's ring meets on every rank but the last.
bool hidden_block(const AttentionShape& shape, BlockPositions positions) {
  if (!shape.causal) return false;
  const std::int64_t last_query = *std::max_element(positions.q, positions.q + shape.q_rows);
  const std::int64_t first_key = *std::min_element(positions.k, positions.k + shape.kv_rows);
  return first_key > last_query;
}

// scores (q_rows x kv_rows) = scale * q_h k_g^T for query head h.
void scores_of(const AttentionShape& shape, const float* q, const float* k, std::int64_t h, float* scores) {
  const Heads heads{shape};
  product(false, true, shape.q_rows, shape.kv_rows, shape.head_dim, shape.scale, heads.q(q, h), heads.kv(k, h), 0.0,
          {scores, shape.kv_rows});
}

// The log-sum-exp of query row i's visible scores, summed in double.
double row_lse(const AttentionShape& shape, BlockPositions positions, const float* row, std::int64_t i) {
  double top = kMinusInfinity;
  for (std::int64_t j = 0; j < shape.kv_rows; ++j) {
    if (visible(shape, positions, i, j)) top = std::max(top, static_cast<double>(row[j]));
  }
  if (top == kMinusInfinity) return kMinusInfinity;
  double sum = 0.0;
  for (std::int64_t j = 0; j < shape.kv_rows; ++j) {
    if (visible(shape, positions, i, j)) sum += std::exp(row[j] - top);
  }
  return top + std::log(sum);
}

// Row i of scores becomes probabilities exp(score - lse), 0 where hidden or
// where the query sees no key at all (lse = -inf).
void to_probabilities(const AttentionShape& shape, BlockPositions positions, float* row, std::int64_t i, double lse) {
  for (std::int64_t j = 0; j < shape.kv_rows; ++j) {
    const bool counted = lse != kMinusInfinity && visible(shape, positions, i, j);
    row[j] = counted ? static_cast<float>(std::exp(row[j] - lse)) : 0.0F;
  }
}

}  // namespace

void attention_forward(const AttentionShape& shape, const float* q, const float* k, const float* v,
                       BlockPositions positions, float* o, float* lse) {
  if (hidden_block(shape, positions)) {
    std::fill(o, o + shape.q_rows * shape.q_heads * shape.head_dim, 0.0F);
    std::fill(lse, lse + shape.q_rows * shape.q_heads, static_cast<float>(kMinusInfinity));
    return;
  }
  const Heads heads{shape};
  std::vector<float> p(static_cast<std::size_t>(shape.q_rows * shape.kv_rows));
  for (std::int64_t h = 0; h < shape.q_heads; ++h) {
    scores_of(shape, q, k, h, p.data());
    for (std::int64_t i = 0; i < shape.q_rows; ++i) {
      float* row = p.data() + i * shape.kv_rows;
      const double row_sum = row_lse(shape, positions, row, i);
      to_probabilities(shape, positions, row, i, row_sum);
      lse[i * shape.q_heads + h] = static_cast<float>(row_sum);
    }
    // o_h = p v_g
    product(false, false, shape.q_rows, shape.head_dim, shape.kv_rows, 1.0, {p.data(), shape.kv_rows},
            heads.kv(v, h), 0.0, heads.q(o, h));
  }
}

void merge_attention(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o, float* lse,
                     const float* o_other, const float* lse_other) {
  for (std::int64_t r = 0; r < rows * heads; ++r) {
    const double a = lse[r];
    const double b = lse_other[r];
    float* o_row = o + r * head_dim;
    const float* other_row = o_other + r * head_dim;
    if (a == kMinusInfinity && b == kMinusInfinity) {
      std::fill(o_row, o_row + head_dim, 0.0F);
      continue;
    }
    const double top = std::max(a, b);
    const double merged = top + std::log(std::exp(a - top) + std::exp(b - top));
    const double wa = std::exp(a - merged);
    const double wb = std::exp(b - merged);
    for (std::int64_t c = 0; c < head_dim; ++c) {
      o_row[c] = static_cast<float>(wa * o_row[c] + wb * other_row[c]);
    }
    lse[r] = static_cast<float>(merged);
  }
}

void output_gradient_dot(std::int64_t rows, std::int64_t heads, std::int64_t head_dim, const float* d_o,
                         const float* o, float* delta) {
  for (std::int64_t r = 0; r < rows * heads; ++r) {
    double sum = 0.0;
    for (std::int64_t c = 0; c < head_dim; ++c) sum += static_cast<double>(d_o[r * head_dim + c]) * o[r * head_dim + c];
    delta[r] = static_cast<float>(sum);
  }
}

void attention_backward(const AttentionShape& shape, const BackwardInputs& in, BlockPositions positions, float* dq,
                        float* dk, float* dv) {
  if (hidden_block(shape, positions)) return;
  const Heads heads{shape};
  const auto block = static_cast<std::size_t>(shape.q_rows * shape.kv_rows);
  std::vector<float> p(block);
  std::vector<float> ds(block);
  const Matrix p_matrix{p.data(), shape.kv_rows};
  const Matrix ds_matrix{ds.data(), shape.kv_rows};
  for (std::int64_t h = 0; h < shape.q_heads; ++h) {
    scores_of(shape, in.q, in.k, h, p.data());
    for (std::int64_t i = 0; i < shape.q_rows; ++i) {
      to_probabilities(shape, positions, p.data() + i * shape.kv_rows, i, in.lse[i * shape.q_heads + h]);
    }
    // dp = d_o_h v_g^T, then ds = p (dp - delta) scale, in place.
    product(false, true, shape.q_rows, shape.kv_rows, shape.head_dim, 1.0, heads.q(in.d_o, h), heads.kv(in.v, h),
            0.0, ds_matrix);
    for (std::int64_t i = 0; i < shape.q_rows; ++i) {
      const double row_delta = in.delta[i * shape.q_heads + h];
      for (std::int64_t j = 0; j < shape.kv_rows; ++j) {
        const std::size_t e = static_cast<std::size_t>(i * shape.kv_rows + j);
        ds[e] = static_cast<float>(p[e] * (ds[e] - row_delta) * shape.scale);
      }
    }
    // dq_h += ds k_g; dk_g += ds^T q_h; dv_g += p^T d_o_h.
    product(false, false, shape.q_rows, shape.head_dim, shape.kv_rows, 1.0, ds_matrix, heads.kv(in.k, h), 1.0,
            heads.q(dq, h));
    product(true, false, shape.kv_rows, shape.head_dim, shape.q_rows, 1.0, ds_matrix, heads.q(in.q, h), 1.0,
            heads.kv(dk, h));
    product(true, false, shape.kv_rows, shape.head_dim, shape.q_rows, 1.0, p_matrix, heads.q(in.d_o, h), 1.0,
            heads.kv(dv, h));
  }
}

}  // namespace dtrain::parallel::cp
