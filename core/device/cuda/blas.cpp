#include "device/cuda/blas.hpp"

#include <dlfcn.h>

#include <string>

#include <cublas_api.h>

#include "base/error.hpp"
#include "device/cuda/runtime.hpp"

namespace dtrain::device::cuda {

namespace {

// The few cuBLAS entry points libdtrain calls, resolved once.
struct BlasApi {
  std::string error;  // why loading failed; empty when loaded
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  const char* (*status_name)(cublasStatus_t) = nullptr;
  const char* (*status_string)(cublasStatus_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void*, cudaDataType, int, long long, const void*,
                                            cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

template <typename F>
bool resolve(void* library, const char* name, F& out, std::string& error) {
  out = reinterpret_cast<F>(dlsym(library, name));
  if (out == nullptr && error.empty()) error = std::string("libcublas has no ") + name;
  return out != nullptr;
}

const BlasApi& api() {
  static const BlasApi loaded = [] {
    BlasApi a;
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    // Kept loaded for the life of the process, like every library libdtrain uses.
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      a.error = name + " could not be loaded" + (why ? std::string(" (") + why + ")" : std::string());
      return a;
    }
    resolve(library, "cublasCreate_v2", a.create, a.error);
    resolve(library, "cublasDestroy_v2", a.destroy, a.error);
    resolve(library, "cublasSetStream_v2", a.set_stream, a.error);
    resolve(library, "cublasGetStatusName", a.status_name, a.error);
    resolve(library, "cublasGetStatusString", a.status_string, a.error);
    resolve(library, "cublasGemmEx", a.gemm_ex, a.error);
    resolve(library, "cublasGemmStridedBatchedEx", a.gemm_strided_batched_ex, a.error);
    return a;
  }();
  return loaded;
}

const BlasApi& require_api() {
  const BlasApi& a = api();
  if (!a.error.empty()) raise(DT_ERR_UNSUPPORTED, "cuBLAS: " + a.error);
  return a;
}

void check_blas(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const BlasApi& a = api();
  const dt_status code = status == CUBLAS_STATUS_ALLOC_FAILED      ? DT_ERR_OUT_OF_MEMORY
                         : status == CUBLAS_STATUS_INVALID_VALUE   ? DT_ERR_INVALID_ARGUMENT
                         : status == CUBLAS_STATUS_NOT_SUPPORTED   ? DT_ERR_UNSUPPORTED
                         : status == CUBLAS_STATUS_ARCH_MISMATCH   ? DT_ERR_UNSUPPORTED
                         : status == CUBLAS_STATUS_NOT_INITIALIZED ? DT_ERR_UNSUPPORTED
                                                                   : DT_ERR_INTERNAL;
  raise(code, what + ": " + a.status_name(status) + " (" + a.status_string(status) + ")");
}

cudaDataType cuda_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return CUDA_R_32F;
    case DType::f64: return CUDA_R_64F;
    case DType::f16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: raise(DT_ERR_UNSUPPORTED, std::string("gemm: ") + dtype_name(dtype) + " is not supported on CUDA");
  }
}

}  // namespace

bool blas_available(std::string* why) {
  const BlasApi& a = api();
  if (why != nullptr) *why = a.error;
  return a.error.empty();
}

BlasHandles::~BlasHandles() {
  const BlasApi& a = api();
  for (auto& [key, handle] : handles_) {
    // Destroying a handle synchronises its device; do it there.
    int previous = -1;
    cudaGetDevice(&previous);
    cudaSetDevice(key.first);
    a.destroy(handle);
    if (previous >= 0) cudaSetDevice(previous);
  }
}

cublasContext* BlasHandles::get(int device, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = handles_.find({device, stream});
  if (found != handles_.end()) return found->second;
  const BlasApi& a = require_api();
  DeviceGuard guard(device);
  cublasHandle_t handle = nullptr;
  check_blas(a.create(&handle), "cublasCreate on device " + std::to_string(device));
  const cublasStatus_t bound = a.set_stream(handle, stream);
  if (bound != CUBLAS_STATUS_SUCCESS) {
    a.destroy(handle);
    check_blas(bound, "cublasSetStream");
  }
  handles_.emplace(std::make_pair(device, stream), handle);
  return handle;
}

std::size_t BlasHandles::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return handles_.size();
}

BlasHandles& shared_blas_handles() {
  static BlasHandles* const handles = new BlasHandles;
  return *handles;
}

void gemm(BlasHandles& handles, int device, cudaStream_t stream, const GemmCall& call) {
  const GemmShape& s = call.shape;
  if (s.m == 0 || s.n == 0 || s.batch == 0) return;
  const bool f64 = call.input == DType::f64;
  const cudaDataType in = cuda_type(call.input);
  const cudaDataType out = cuda_type(call.output);
  const cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  const BlasApi& a = require_api();
  cublasHandle_t handle = handles.get(device, stream);
  DeviceGuard guard(device);
  // A row-major matrix is its column-major transpose: C^T = op(B)^T op(A)^T,
  // so cuBLAS gets B first and the dimensions n, m. Dimensions and strides
  // fit in int (device/gemm.cpp checked them).
  const cublasOperation_t op_a = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float alpha32 = static_cast<float>(s.alpha);
  const float beta32 = static_cast<float>(s.beta);
  const void* alpha = f64 ? static_cast<const void*>(&s.alpha) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&s.beta) : &beta32;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const int lda = static_cast<int>(s.lda), ldb = static_cast<int>(s.ldb), ldc = static_cast<int>(s.ldc);
  if (s.batch == 1) {
    check_blas(a.gemm_ex(handle, op_b, op_a, n, m, k, alpha, call.b, in, ldb, call.a, in, lda, beta, call.c, out, ldc,
                         compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
    return;
  }
  check_blas(a.gemm_strided_batched_ex(handle, op_b, op_a, n, m, k, alpha, call.b, in, ldb, s.stride_b, call.a, in,
                                       lda, s.stride_a, beta, call.c, out, ldc, s.stride_c, static_cast<int>(s.batch),
                                       compute, CUBLAS_GEMM_DEFAULT),
             "cublasGemmStridedBatchedEx");
}

}  // namespace dtrain::device::cuda
