#include "device/cpu/gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "device/cpu/blas_threads.hpp"
#include "device/cpu/element.hpp"

namespace dtrain::device::cpu {

namespace {

CBLAS_TRANSPOSE op(bool transpose) { return transpose ? CblasTrans : CblasNoTrans; }

// cblas_sgemm or cblas_dgemm, row-major, with the shape's transposes.
template <typename T>
void blas_gemm(const GemmShape& s, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
               std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  auto call = [&](auto gemm) {
    gemm(CblasRowMajor, op(s.transpose_a), op(s.transpose_b), static_cast<blasint>(m), static_cast<blasint>(n),
         static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
         static_cast<blasint>(ldc));
  };
  if constexpr (std::is_same_v<T, float>) {
    call(cblas_sgemm);
  } else {
    call(cblas_dgemm);
  }
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

// `count` floats of this thread's scratch memory, kept from call to call so
// that a product of 16-bit matrices does not fault fresh pages in every time.
float* scratch(std::int64_t count) {
  thread_local std::vector<float> memory;
  if (memory.size() < static_cast<std::size_t>(count)) memory.resize(static_cast<std::size_t>(count));
  return memory.data();
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
// with BLAS) and accumulated into C itself when it is f32, or else into an
// f32 copy of it that is rounded to C's dtype once at the end.
template <typename E>
void widened_gemm(const GemmCall& call) {
  const GemmShape& s = call.shape;
  const bool c_is_f32 = call.output == DType::f32;
  const std::int64_t block_k = std::min(s.k, kGemmBlockK);
  float* a_block = scratch((s.m + s.n) * block_k + (c_is_f32 ? 0 : s.m * s.n));
  float* b_block = a_block + s.m * block_k;
  float* c_copy = b_block + s.n * block_k;
  const std::size_t in_size = dtype_size(call.input);
  for (std::int64_t i = 0; i < s.batch; ++i) {
    const auto* a = static_cast<const std::byte*>(call.a) + i * s.stride_a * in_size;
    const auto* b = static_cast<const std::byte*>(call.b) + i * s.stride_b * in_size;
    auto* c16 = static_cast<typename E::Bits*>(call.c) + i * s.stride_c;
    float* c = c_is_f32 ? static_cast<float*>(call.c) + i * s.stride_c : c_copy;
    const std::int64_t ldc = c_is_f32 ? s.ldc : s.n;
    if (!c_is_f32 && s.beta != 0.0) widen_block<E>(c16, s.ldc, 0, s.m, 0, s.n, c_copy);
    if (s.k == 0) {  // no block below: C = beta * C, as BLAS does for k = 0
      blas_gemm(s, s.m, s.n, 0, 0.0f, a_block, s.transpose_a ? std::max<std::int64_t>(s.m, 1) : 1, b_block,
                s.transpose_b ? 1 : s.n, static_cast<float>(s.beta), c, ldc);
    }
    float beta = static_cast<float>(s.beta);
    for (std::int64_t k0 = 0; k0 < s.k; k0 += kGemmBlockK) {
      const std::int64_t kb = std::min(kGemmBlockK, s.k - k0);
      // Stored A is m x k (k x m transposed); stored B is k x n (n x k).
      if (s.transpose_a) {
        widen_block<E>(a, s.lda, k0, kb, 0, s.m, a_block);
      } else {
        widen_block<E>(a, s.lda, 0, s.m, k0, kb, a_block);
      }
      if (s.transpose_b) {
        widen_block<E>(b, s.ldb, 0, s.n, k0, kb, b_block);
      } else {
        widen_block<E>(b, s.ldb, k0, kb, 0, s.n, b_block);
      }
      blas_gemm(s, s.m, s.n, kb, static_cast<float>(s.alpha), a_block, s.transpose_a ? s.m : kb, b_block,
                s.transpose_b ? kb : s.n, beta, c, ldc);
      beta = 1.0f;  // later blocks add to the earlier ones
    }
    if (c_is_f32) continue;
    for (std::int64_t r = 0; r < s.m; ++r) {
      for (std::int64_t j = 0; j < s.n; ++j) c16[r * s.ldc + j] = E::store(c_copy[r * s.n + j]);
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
