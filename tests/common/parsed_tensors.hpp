// Test helper: DLTensors parsed for the core as the C API parses them
// (capi/src/arguments.cpp), with this machine's CUDA devices.
#pragma once

#include <span>

#include <dlpack/dlpack.h>

#include "base/tensor_list.hpp"
#include "device/probe.hpp"

namespace dtrain::testing {

// A list for a collective constructor, each tensor named `<list>[i]`; a
// refusal is kept for the core to raise inside its agreement.
inline ParsedTensors parsed(std::span<const DLTensor* const> tensors, const char* list) {
  return parse([&] { return check_tensors(tensors, list, Placement::one_device, device::cuda_devices()); });
}

}  // namespace dtrain::testing
