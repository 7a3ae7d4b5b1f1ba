#include "device/selection.hpp"

#include <string>

#include "base/error.hpp"
#include "dtrain/common.h"

namespace dtrain::device {

namespace {

std::string devices_text(int count) {
  return std::to_string(count) + (count == 1 ? " CUDA device" : " CUDA devices");
}

}  // namespace

int choose_device(int option, int local_rank, int device_count, bool cuda_compiled) {
  if (option == DT_UNDEF) {
    if (device_count <= 0) return -1;
    return (local_rank < 0 ? 0 : local_rank) % device_count;
  }
  const std::string name = "options.device = " + std::to_string(option);
  if (option < 0) raise(DT_ERR_INVALID_ARGUMENT, name + " is negative (DT_UNDEF chooses by local rank)");
  if (!cuda_compiled) raise(DT_ERR_UNSUPPORTED, name + ": this build has no CUDA device support");
  if (device_count <= 0) {
    raise(DT_ERR_UNSUPPORTED, name + ": no CUDA device is usable on this machine (no driver or no device)");
  }
  if (option >= device_count) {
    raise(DT_ERR_INVALID_ARGUMENT, name + " but this process sees " + devices_text(device_count) +
                                       " (0.." + std::to_string(device_count - 1) + ")");
  }
  return option;
}

}  // namespace dtrain::device
