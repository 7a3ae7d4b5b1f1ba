// GEMM on the CPU through OpenBLAS's CBLAS (semantics in device/gemm.hpp).
// f32 and f64 go straight to cblas_sgemm / cblas_dgemm, row-major. f16 and
// bf16 are widened to f32 block by block (kGemmBlockK columns of op(A) and
// rows of op(B) at a time) and multiplied with cblas_sgemm into C when it is
// f32, or else into an f32 copy of C rounded to its dtype once at the end:
// the extra memory, kept per thread from call to call, is two blocks (and
// that copy), whatever k is. Runs on the calling thread plus the OpenBLAS
// threads blas_threads.hpp configures.
#pragma once

#include <cstdint>

#include "device/gemm_call.hpp"

namespace dtrain::device::cpu {

inline constexpr std::int64_t kGemmBlockK = 256;

// `call` is checked (device/gemm.cpp); host pointers.
void gemm(const GemmCall& call);

}  // namespace dtrain::device::cpu
