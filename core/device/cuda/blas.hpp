// cuBLAS, loaded at run time (dlopen of libcublas.so.<major of the toolkit>)
// so that libdtrain needs no cuBLAS where no GEMM on a GPU is asked for, and
// handles kept per device and stream.
#pragma once

#include <string>
#include <map>
#include <mutex>
#include <utility>

#include <cuda_runtime_api.h>

#include "device/gemm_call.hpp"

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

// The handles every GEMM of the process uses (device/gemm.cpp). Never
// destroyed: at exit the CUDA runtime may be gone before any destructor runs.
BlasHandles& shared_blas_handles();

// `call` (checked by device/gemm.cpp, CUDA pointers on `device`) on `stream`:
// cublasGemmEx for one product, cublasGemmStridedBatchedEx for a batch,
// CUBLAS_COMPUTE_32F for f32, f16 and bf16 (f32 accumulation), 64F for f64.
void gemm(BlasHandles& handles, int device, cudaStream_t stream, const GemmCall& call);

}  // namespace dtrain::device::cuda
