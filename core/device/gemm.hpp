// Matrix products on either device, behind one call: what the strategies'
// local math (parallel linear layers, attention blocks, expert MLPs) runs on.
// Host memory goes to OpenBLAS (device/cpu/gemm.hpp), CUDA memory to cuBLAS
// (device/cuda/blas.hpp), both with the same row-major semantics:
//
//   C[i] = alpha * op(A[i]) * op(B[i]) + beta * C[i]    for i in [0, batch)
//
// where every matrix is row-major, op(X) is X or its transpose, op(A) is
// m x k, op(B) is k x n and C is m x n. A transposed operand is stored as its
// transpose: A as k x m rows when transpose_a, B as n x k rows when
// transpose_b. Row strides (lda, ldb, ldc) count elements between the starts
// of consecutive stored rows; kPacked means the stored row's length.
//
// Dtypes: A and B share one of f32, f64, f16, bf16. C is that dtype or, for
// f16 and bf16 inputs, f32. f32 and f64 compute in their own type; f16 and
// bf16 are widened to f32, products are accumulated in f32 and C is rounded
// once at the end when it is 16-bit. beta == 0 ignores what C held (NaN
// included), as BLAS does.
#pragma once

#include <cstdint>
#include <span>

#include "base/tensor.hpp"

namespace dtrain::device {

// A row or batch stride that follows from the shape: rows and matrices
// stored one after the other.
inline constexpr std::int64_t kPacked = -1;

struct GemmShape {
  bool transpose_a = false;
  bool transpose_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = kPacked, ldb = kPacked, ldc = kPacked;
  // Strided batches: matrix i of X starts stride_x * i elements after the
  // first. A stride of 0 for A or B uses one matrix for every product (a
  // weight shared by a batch); C's matrices must not overlap.
  std::int64_t batch = 1;
  std::int64_t stride_a = kPacked, stride_b = kPacked, stride_c = kPacked;
  double alpha = 1.0;
  double beta = 0.0;
};

// The shape with every kPacked stride replaced by its value.
GemmShape resolve_strides(const GemmShape& shape);

// Plain (batch 1) and strided-batched products. A, B and C must be in one
// place (host memory or one CUDA device; C's stream orders the work there),
// hold every element the shape reaches, and C must not overlap A or B.
// Throws DT_ERR_INVALID_ARGUMENT for bad shapes, strides, places or dtypes
// before anything is computed, DT_ERR_UNSUPPORTED where the device cannot.
void gemm(const GemmShape& shape, const TensorView& a, const TensorView& b, const TensorView& c);

// Batched products over independent matrices: `shape` (with batch 1 and
// strides ignored) applies to a[i], b[i], c[i] for every i. The spans must
// have equal lengths. Every product is checked before the first is computed.
void gemm_batched(const GemmShape& shape, std::span<const TensorView> a, std::span<const TensorView> b,
                  std::span<const TensorView> c);

}  // namespace dtrain::device
