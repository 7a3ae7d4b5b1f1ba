#include "device/probe.hpp"

#ifdef DTRAIN_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef DTRAIN_HAVE_NCCL
#include <dlfcn.h>
#endif

namespace dtrain::device {

std::string cuda_summary() {
#ifdef DTRAIN_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky error so later CUDA calls start clean
    return "compiled, no device";
  }
  return "compiled, " + std::to_string(count) + (count == 1 ? " device" : " devices");
#else
  return "not compiled";
#endif
}

std::string nccl_summary() {
#ifdef DTRAIN_HAVE_NCCL
  // NCCL is loaded at run time so that the library runs where NCCL is absent.
  void* handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return "compiled, library not found";
  using GetVersion = int (*)(int*);
  auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "ncclGetVersion"));
  int code = 0;
  std::string result = "compiled, library without ncclGetVersion";
  if (get_version != nullptr && get_version(&code) == 0) {
    // NCCL encodes 2.x.y as major * 10000 + minor * 100 + patch.
    result = std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
             std::to_string(code % 100);
  }
  dlclose(handle);
  return result;
#else
  return "not compiled";
#endif
}

}  // namespace dtrain::device
