// cuBLAS, loaded at run time (dlopen of libcublas.so.<major of the toolkit>)
// so that libdtrain needs no cuBLAS where no GEMM on a GPU is asked for, and
// handles kept per device and stream.
#pragma once

#include <cstdint>
#include <string>
#include <map>
#include <mutex>
#include <utility>

#include <cuda_runtime_api.h>

#include "base/dtype.hpp"

struct cublasContext;

namespace dtrain::device::cuda {

// True when cuBLAS could be loaded; `why` says what failed otherwise.
bool blas_available(std::string* why = nullptr);

// cuBLAS handles, one per (device, stream), created on first use and bound
// to their stream; destroyed with the object. Not thread-safe by itself
// beyond get(), which is.
class BlasHandles {
 public:
  BlasHandles() = default;
  ~BlasHandles();
  BlasHandles(const BlasHandles&) = delete;
  BlasHandles& operator=(const BlasHandles&) = delete;

  // The handle for `stream` on `device`; throws DT_ERR_UNSUPPORTED when cuBLAS
  // cannot be loaded, or cuBLAS's error.
  cublasContext* get(int device, cudaStream_t stream);
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<int, cudaStream_t>, cublasContext*> handles_;
};

// Row-major C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C on
// `stream` of `device`, where op transposes when asked. lda, ldb and ldc are
// row strides in elements. f32 and f64 compute in their own type; f16 and
// bf16 store 16-bit values and accumulate in f32.
struct Gemm {
  bool transpose_a = false;
  bool transpose_b = false;
  std::int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::f32;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
  double alpha = 1.0;
  double beta = 0.0;
};
void gemm(BlasHandles& handles, int device, cudaStream_t stream, const Gemm& g);

}  // namespace dtrain::device::cuda
