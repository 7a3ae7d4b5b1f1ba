#include "device/cuda/error.hpp"

namespace dtrain::device::cuda {

dt_status status_of(cudaError_t error) noexcept {
  switch (error) {
    case cudaSuccess:
      return DT_OK;
    case cudaErrorNotReady:
      return DT_INPROGRESS;
    case cudaErrorMemoryAllocation:
      return DT_ERR_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNotSupported:
    case cudaErrorNoKernelImageForDevice:
      return DT_ERR_UNSUPPORTED;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidResourceHandle:
      return DT_ERR_INVALID_ARGUMENT;
    default:
      return DT_ERR_INTERNAL;
  }
}

std::string describe(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

void check(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return;
  // Non-sticky errors are also kept as the runtime's "last error"; take it
  // so that the next cudaGetLastError() does not see this one again.
  cudaGetLastError();
  raise(status_of(error), what + ": " + describe(error));
}

void check_launch(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) raise(status_of(error), std::string("launching ") + kernel + ": " + describe(error));
}

}  // namespace dtrain::device::cuda
