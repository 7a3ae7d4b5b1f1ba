#include "device_copies.hpp"

#include <cstdio>
#include <cstdlib>

#ifdef DTBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace dtbench {

#ifdef DTBENCH_WITH_CUDA
namespace {

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "dtbench: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

}  // namespace

int cuda_devices() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess ? devices : 0;
}

void cuda_synchronize() { cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

void DeviceCopies::move(DLTensor& tensor, std::size_t bytes) {
  const char* local = std::getenv("DTRAIN_LOCAL_RANK");
  const int device = (local != nullptr ? std::atoi(local) : 0) % cuda_devices();
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
  void* copy = nullptr;
  cuda_check(cudaMalloc(&copy, bytes + 1), "cudaMalloc");  // + 1: a tensor of no elements
  copies_.emplace_back(copy, [](void* p) { cudaFree(p); });
  cuda_check(cudaMemcpy(copy, tensor.data, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  tensor.data = copy;
  tensor.device = {kDLCUDA, device};
}
#else
int cuda_devices() { return 0; }
void cuda_synchronize() {}
void DeviceCopies::move(DLTensor&, std::size_t) {
  std::fprintf(stderr, "dtbench: this build has no CUDA\n");
  std::exit(1);
}
#endif

}  // namespace dtbench
