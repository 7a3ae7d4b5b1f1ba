#include "device/cpu/gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "device/cpu/blas_threads.hpp"
#include "device/cpu/element.hpp"

namespace dtrain::device::cpu {

namespace {

CBLAS_TRANSPOSE op(bool transpose) { return transpose ? CblasTrans : CblasNoTrans; }

void blas_gemm(const GemmShape& s, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
               std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, op(s.transpose_a), op(s.transpose_b), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

void blas_gemm(const GemmShape& s, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
               std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, op(s.transpose_a), op(s.transpose_b), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

// f32 and f64: every matrix of the batch straight to BLAS.
template <typename T>
void native_gemm(const GemmCall& call) {
  const GemmShape& s = call.shape;
  const auto* a = static_cast<const T*>(call.a);
  const auto* b = static_cast<const T*>(call.b);
  auto* c = static_cast<T*>(call.c);
  for (std::int64_t i = 0; i < s.batch; ++i) {
    blas_gemm(s, s.m, s.n, s.k, static_cast<T>(s.alpha), a + i * s.stride_a, s.lda, b + i * s.stride_b, s.ldb,
              static_cast<T>(s.beta), c + i * s.stride_c, s.ldc);
  }
}

// dst (rows x cols, packed f32) = src's rows [row0, row0 + rows) and columns
// [col0, col0 + cols), widened.
template <typename E>
void widen_block(const void* src, std::int64_t ld, std::int64_t row0, std::int64_t rows, std::int64_t col0,
                 std::int64_t cols, float* dst) {
  const auto* from = static_cast<const typename E::Bits*>(src);
  for (std::int64_t r = 0; r < rows; ++r) {
    const typename E::Bits* row = from + (row0 + r) * ld + col0;
    for (std::int64_t j = 0; j < cols; ++j) dst[r * cols + j] = E::load(row[j]);
  }
}

// f16 and bf16 inputs: op(A)'s columns and op(B)'s rows [k0, k0 + kb) are
// widened into packed f32 blocks (laid out as stored, so the transposes stay
// with BLAS) and accumulated into an f32 C; C is read (beta) and written (in
// its own dtype, E for 16 bits or f32) once per matrix.
template <typename E>
void widened_gemm(const GemmCall& call) {
  const GemmShape& s = call.shape;
  const bool c_is_f32 = call.output == DType::f32;
  std::vector<float> c32(static_cast<std::size_t>(s.m * s.n));
  std::vector<float> a_block(static_cast<std::size_t>(s.m * std::min(s.k, kGemmBlockK)));
  std::vector<float> b_block(static_cast<std::size_t>(s.n * std::min(s.k, kGemmBlockK)));
  const std::size_t in_size = dtype_size(call.input);
  const std::size_t out_size = dtype_size(call.output);
  for (std::int64_t i = 0; i < s.batch; ++i) {
    const auto* a = static_cast<const std::byte*>(call.a) + i * s.stride_a * in_size;
    const auto* b = static_cast<const std::byte*>(call.b) + i * s.stride_b * in_size;
    auto* c = static_cast<std::byte*>(call.c) + i * s.stride_c * out_size;
    if (s.beta != 0.0) {
      if (c_is_f32) {
        widen_block<F32>(c, s.ldc, 0, s.m, 0, s.n, c32.data());
      } else {
        widen_block<E>(c, s.ldc, 0, s.m, 0, s.n, c32.data());
      }
    }
    float beta = static_cast<float>(s.beta);
    for (std::int64_t k0 = 0; k0 < s.k; k0 += kGemmBlockK) {
      const std::int64_t kb = std::min(kGemmBlockK, s.k - k0);
      // Stored A is m x k (k x m transposed); stored B is k x n (n x k).
      if (s.transpose_a) {
        widen_block<E>(a, s.lda, k0, kb, 0, s.m, a_block.data());
      } else {
        widen_block<E>(a, s.lda, 0, s.m, k0, kb, a_block.data());
      }
      if (s.transpose_b) {
        widen_block<E>(b, s.ldb, 0, s.n, k0, kb, b_block.data());
      } else {
        widen_block<E>(b, s.ldb, k0, kb, 0, s.n, b_block.data());
      }
      blas_gemm(s, s.m, s.n, kb, static_cast<float>(s.alpha), a_block.data(), s.transpose_a ? s.m : kb,
                b_block.data(), s.transpose_b ? kb : s.n, beta, c32.data(), s.n);
      beta = 1.0f;  // later blocks add to the earlier ones
    }
    if (s.k == 0) {  // no block ran: C = beta * C
      for (float& x : c32) x = s.beta == 0.0 ? 0.0f : beta * x;
    }
    for (std::int64_t r = 0; r < s.m; ++r) {
      const float* from = c32.data() + r * s.n;
      if (c_is_f32) {
        std::copy(from, from + s.n, reinterpret_cast<float*>(c) + r * s.ldc);
      } else {
        auto* to = reinterpret_cast<typename E::Bits*>(c) + r * s.ldc;
        for (std::int64_t j = 0; j < s.n; ++j) to[j] = E::store(from[j]);
      }
    }
  }
}

}  // namespace

void gemm(const GemmCall& call) {
  const GemmShape& s = call.shape;
  if (s.m == 0 || s.n == 0 || s.batch == 0) return;
  configure_blas_threads();
  switch (call.input) {
    case DType::f32: native_gemm<float>(call); break;
    case DType::f64: native_gemm<double>(call); break;
    case DType::f16: widened_gemm<F16>(call); break;
    case DType::bf16: widened_gemm<BF16>(call); break;
    default: raise(DT_ERR_UNSUPPORTED, std::string("gemm: ") + dtype_name(call.input) + " is not supported");
  }
}

}  // namespace dtrain::device::cpu
