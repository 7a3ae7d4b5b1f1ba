#include <string>

#include <ucp/api/ucp.h>

#include "device/probe.hpp"
#include "dtrain/version.h"

namespace {

std::string describe_build() {
  // Backends and devices compiled in; then what this machine offers.
#ifdef DTRAIN_HAVE_NCCL
  const char* backends = "self, ucx, nccl, staged";
#elif defined(DTRAIN_HAVE_CUDA)
  const char* backends = "self, ucx, staged";
#else
  const char* backends = "self, ucx";
#endif
  const char* devices = dtrain::device::cuda_compiled() ? "cpu, cuda" : "cpu";
  return "libdtrain " + std::to_string(DT_VERSION_MAJOR) + "." + std::to_string(DT_VERSION_MINOR) + "." +
         std::to_string(DT_VERSION_PATCH) + "; backends: " + backends + "; devices: " + devices +
         "; ucx: " + ucp_get_version_string() + "; cuda: " + dtrain::device::cuda_summary() +
         "; nccl: " + dtrain::device::nccl_summary();
}

}  // namespace

extern "C" {

DT_API void dt_version(int* major, int* minor, int* patch) {
  if (major) *major = DT_VERSION_MAJOR;
  if (minor) *minor = DT_VERSION_MINOR;
  if (patch) *patch = DT_VERSION_PATCH;
}

DT_API const char* dt_build_info(void) {
  // Probed once: the answer describes the process's build and machine.
  static const std::string info = describe_build();
  return info.c_str();
}

}  // extern "C"
