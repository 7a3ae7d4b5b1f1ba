// What accelerator support this build has and what this machine offers, for
// dt_build_info() and for the checks that decide whether CUDA tensors are
// accepted. Probing never prints and never fails: a missing driver, device or
// library is simply reported.
#pragma once

#include <string>

#include "base/tensor.hpp"

namespace dtrain::device {

// True when this build has the CUDA device layer.
bool cuda_compiled();

// The number of CUDA devices this process can use: 0 without the CUDA build,
// without a driver, or without a device. Probed once per process (the
// driver's view, CUDA_VISIBLE_DEVICES included, is fixed at start-up).
int cuda_device_count();

// Why cuda_device_count() is 0, for messages: "this build has no CUDA
// support", "no CUDA driver (cudaErrorInsufficientDriver)", "no CUDA device
// (cudaErrorNoDevice)"; empty when there are devices.
const std::string& cuda_unavailable_reason();

// cuda_device_count() and the reason, in the form base's check_tensor takes.
const CudaDevices& cuda_devices();

// "compiled, 2 devices", "compiled, no device", or "not compiled".
std::string cuda_summary();

// "2.27.7", "compiled, library not found", or "not compiled".
std::string nccl_summary();

}  // namespace dtrain::device
