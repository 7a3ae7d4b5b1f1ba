#include "device/probe.hpp"

#ifdef DTRAIN_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef DTRAIN_HAVE_NCCL
#include <dlfcn.h>
#endif

namespace dtrain::device {

namespace {

struct CudaProbe {
  int count = 0;
  std::string reason;
};

const CudaProbe& cuda_probe() {
  // Computed once, thread-safely; constant afterwards.
  static const CudaProbe probe = [] {
    CudaProbe p;
#ifdef DTRAIN_HAVE_CUDA
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      // Clear the error so that later CUDA calls start clean; the static
      // runtime prints nothing of its own.
      cudaGetLastError();
      p.reason = std::string(rc == cudaErrorNoDevice ? "no CUDA device" : "no usable CUDA driver or device") +
                 " (" + cudaGetErrorName(rc) + ")";
    } else if (count <= 0) {
      p.reason = "no CUDA device";
    } else {
      p.count = count;
    }
#else
    p.reason = "this build has no CUDA support";
#endif
    return p;
  }();
  return probe;
}

}  // namespace

bool cuda_compiled() {
#ifdef DTRAIN_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() { return cuda_probe().count; }

const std::string& cuda_unavailable_reason() { return cuda_probe().reason; }

const CudaDevices& cuda_devices() {
  static const CudaDevices devices = [] {
    CudaDevices d;
    d.count = cuda_device_count();
    if (d.count == 0) {
      d.unusable = cuda_compiled() ? "none is usable here (" + cuda_unavailable_reason() + ")"
                                   : cuda_unavailable_reason();
    }
    return d;
  }();
  return devices;
}

std::string cuda_summary() {
#ifdef DTRAIN_HAVE_CUDA
  const int count = cuda_device_count();
  if (count == 0) return "compiled, no device";
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
