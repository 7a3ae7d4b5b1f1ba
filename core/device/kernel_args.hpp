// What each layer kernel computes, and its operands as the device backends
// receive them (raw pointers, checked by device/kernels.cpp): one struct per
// kernel, shared by the CPU (device/cpu/layer_kernels.hpp) and CUDA
// (device/cuda/layer_kernels.hpp) versions. Matrices are row-major and
// packed, rows x cols; "over the last dimension" means along a row.
// Storage dtypes are f32, f16 or bf16; math is in f32 (16-bit values are
// widened on load and rounded to nearest even once on store). Saved
// statistics (lse, mean, rstd) are always f32. Plain C++17, for nvcc.
#pragma once

#include <cstdint>

#include "base/dtype.hpp"

namespace dtrain::device {

struct RowShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// y = softmax(x) along each row, computed as exp(x - max) / sum, and
// lse[r] = log(sum_j exp(x[r][j])) (what a backward pass or a blockwise
// attention merge needs). A row of -inf gives NaN, as the maths does.
struct SoftmaxArgs {
  RowShape shape;
  DType dtype = DType::f32;  // x and y
  const void* x = nullptr;
  void* y = nullptr;
  float* lse = nullptr;  // rows
};

// dx = y * (dy - sum_j(dy * y)) along each row: softmax's backward from its
// output y.
struct SoftmaxBackwardArgs {
  RowShape shape;
  DType dtype = DType::f32;  // y, dy and dx
  const void* y = nullptr;
  const void* dy = nullptr;
  void* dx = nullptr;
};

// The k largest elements of each row, largest first, and their column
// indices: values[r][i] = x[r][indices[r][i]]. Ties go to the lower index;
// NaN counts as larger than every number (so it is never silently dropped).
struct TopKArgs {
  RowShape shape;
  std::int64_t k = 0;  // 0 < k <= cols
  DType dtype = DType::f32;  // x and values
  const void* x = nullptr;
  void* values = nullptr;          // rows x k
  std::int64_t* indices = nullptr;  // rows x k
};

// Element-wise activations. GELU comes in its two usual forms:
// gelu_tanh = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (GPT-2's and
// PyTorch's approximate="tanh"), gelu_erf = 0.5 x (1 + erf(x / sqrt(2)))
// (the exact one, PyTorch's default); silu = x * sigmoid(x).
enum class Activation { gelu_tanh, gelu_erf, silu };

// Forward: out = f(x). Backward: out = f'(x) * dy (dy non-null).
struct ActivationArgs {
  Activation kind = Activation::gelu_tanh;
  DType dtype = DType::f32;  // x, dy and out
  std::int64_t count = 0;
  const void* x = nullptr;
  const void* dy = nullptr;  // backward only
  void* out = nullptr;
};

// Layer norm (centred: beta and mean set) or RMS norm (beta and mean null),
// along each row of n = cols elements:
//   layer: mean = sum(x)/n, rstd = 1/sqrt(sum((x - mean)^2)/n + eps)
//   RMS:   rstd = 1/sqrt(sum(x^2)/n + eps)
//   y = (x - mean) * rstd * gamma (+ beta)
// gamma and beta hold cols elements of the dtype of x; mean and rstd (rows
// f32) are saved for the backward pass.
struct NormArgs {
  RowShape shape;
  DType dtype = DType::f32;  // x, gamma, beta, y
  float eps = 1e-5f;
  const void* x = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;  // null: RMS norm
  void* y = nullptr;
  float* mean = nullptr;  // null exactly when beta is
  float* rstd = nullptr;
};

// The backward pass of NormArgs from the saved statistics, with
// xhat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat))   (layer)
//   dx = rstd * (g - xhat * mean_j(g * xhat))               (RMS)
//   dgamma = sum over rows of dy * xhat, dbeta = sum over rows of dy
// dgamma and dbeta are overwritten (not accumulated into).
struct NormBackwardArgs {
  RowShape shape;
  DType dtype = DType::f32;  // x, gamma, dy, dx, dgamma, dbeta
  const void* x = nullptr;
  const void* gamma = nullptr;
  const void* dy = nullptr;
  const float* mean = nullptr;  // null: RMS norm
  const float* rstd = nullptr;
  void* dx = nullptr;
  void* dgamma = nullptr;
  void* dbeta = nullptr;  // null exactly when mean is
};

// Rows of a table picked by index: gather copies table[indices[i]] to
// rows[i]; scatter_add adds rows[i] into table[indices[i]] (repeated
// indices add up). Indices are i32 or i64 in [0, table_rows).
//
// A slice (slice true) is rows [first, first + table_rows) of a larger
// table that the indices name (a rank's share of a vocabulary): row
// indices[i] - first, and an index outside the slice gives a row of zeros
// (gather) or adds nothing (scatter_add).
struct IndexedRowsArgs {
  DType dtype = DType::f32;        // table and rows
  DType index_dtype = DType::i64;  // i32 or i64
  std::int64_t table_rows = 0;
  std::int64_t cols = 0;
  std::int64_t count = 0;  // indices, and rows of `rows`
  const void* indices = nullptr;
  void* table = nullptr;  // read by gather, updated by scatter_add
  void* rows = nullptr;   // written by gather, read by scatter_add
  bool slice = false;
  std::int64_t first = 0;  // slices only
};

// The rows of an MoE layer's (token, choice) pairs summed back into their
// tokens (combine), and that sum's backward pass. `rows` is a table of
// table_rows x cols; pair_rows (tokens * k) names, for pair p = t * k + j,
// the table row that pair owns, or -1 for a pair that owns none (dropped);
// no two pairs own one row. weights (tokens * k), or null for weights of 1.
//  sum:      out[t] = the sum over t's pairs p that own a row of
//            weights[p] * rows[pair_rows[p]], in order of j; a token whose
//            pairs own no row gets a row of zeros.
//  backward: from d_out (tokens x cols), for every pair p owning a row:
//            d_rows[pair_rows[p]] = weights[p] * d_out[t] and
//            d_weights[p] = d_out[t] . rows[pair_rows[p]] (accumulated in
//            double); d_weights[p] = 0 for a pair owning none. Rows of
//            d_rows that no pair owns are left as they are.
// All f32 but pair_rows (i64).
struct PairRowsArgs {
  std::int64_t tokens = 0;
  std::int64_t k = 0;
  std::int64_t cols = 0;
  std::int64_t table_rows = 0;
  const std::int64_t* pair_rows = nullptr;
  const float* weights = nullptr;  // sum: may be null
  const float* rows = nullptr;     // the table
  float* out = nullptr;            // sum
  const float* d_out = nullptr;    // backward
  float* d_rows = nullptr;         // backward: table_rows x cols
  float* d_weights = nullptr;      // backward
};

// The cross-entropy over logits z split by vocabulary: z is rows x cols, the
// columns [first, first + cols) of a vocabulary of `vocab` (the others on
// other ranks). targets (i32 or i64, rows) name vocabulary columns; a target
// outside [first, first + cols) has no column here. All f32.
struct LogitSlice {
  RowShape shape;
  std::int64_t first = 0;
  DType target_dtype = DType::i64;
  const void* targets = nullptr;
  const float* z = nullptr;
};

// Statistics of this slice, per row: max[r] = max_j z[r][j], sum_exp[r] =
// sum_j exp(z[r][j] - max[r]), target[r] = z[r][targets[r] - first] (0 when
// the target is elsewhere), sum[r] = sum_j z[r][j]. Sums accumulate in
// double on the CPU, in f32 on CUDA.
struct CrossEntropyStatsArgs {
  LogitSlice logits;
  float* max = nullptr;
  float* sum_exp = nullptr;
  float* target = nullptr;
  float* sum = nullptr;
};

// The gradient of the label-smoothed loss (smoothing s) with the whole
// vocabulary's log-sum-exp lse[r] and upstream gradient scale[r]:
// dz[r][j] = scale[r] * (exp(z[r][j] - lse[r]) - s / vocab
//            - (1 - s) [j == targets[r] - first]),
// and dz[r][j] = 0 on rows whose target is ignore_index.
struct CrossEntropyGradArgs {
  LogitSlice logits;
  std::int64_t vocab = 0;
  float smoothing = 0.0f;
  std::int64_t ignore_index = -100;
  const float* lse = nullptr;
  const float* scale = nullptr;
  float* dz = nullptr;
};

}  // namespace dtrain::device
