#include <string>

#include <ucp/api/ucp.h>

#include "device/probe.hpp"
#include "dtrain/version.h"

namespace {

std::string describe_build() {
  return "libdtrain " + std::to_string(DT_VERSION_MAJOR) + "." + std::to_string(DT_VERSION_MINOR) + "." +
         std::to_string(DT_VERSION_PATCH) + "; backends: self; devices: cpu; ucx: " +
         ucp_get_version_string() + "; cuda: " + dtrain::device::cuda_summary() +
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
