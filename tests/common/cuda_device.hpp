// Test helper: whether the library under test sees a usable CUDA device, as
// dt_build_info() reports it. Without one, kDLCUDA tensors are refused with
// DT_ERR_UNSUPPORTED; with one, host memory labelled kDLCUDA is caught as
// not being device memory.
#pragma once

#include <string>

#include "dtrain.h"

namespace dtrain::testing {

inline bool cuda_device_present() {
  const std::string info = dt_build_info();
  return info.find("cuda: compiled, no device") == std::string::npos &&
         info.find("cuda: not compiled") == std::string::npos;
}

}  // namespace dtrain::testing
