// What ranks compare before working on a list of tensors together: each
// tensor's dtype and shape, checked and copied out of the caller's DLTensor.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/tensor.hpp"

namespace dtrain::parallel::common {

struct TensorLayout {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;

  bool operator==(const TensorLayout&) const = default;
};

// "float32[16, 8]".
std::string to_string(const TensorLayout& layout);

// A tensor accepted for collective use: its view and its layout.
struct CheckedTensor {
  TensorView view;
  TensorLayout layout;
};

// Where a list of tensors may live: in host memory only (for code with
// host kernels only), or all on one device, host memory or one CUDA device.
enum class Placement { host, one_device };

// Checks every tensor (check_tensor, naming it `<list>[i]`), refuses tensors
// whose memory overlaps (both would be written), and returns them in order.
// With Placement::host, CUDA tensors are DT_ERR_UNSUPPORTED; with
// one_device, they are accepted where this machine has the device (else
// DT_ERR_UNSUPPORTED), aligned to their elements, and every tensor must be
// where `<list>[0]` is (DT_ERR_INVALID_ARGUMENT).
std::vector<CheckedTensor> check_tensors(std::span<const DLTensor* const> tensors, const char* list,
                                         Placement placement = Placement::host);

}  // namespace dtrain::parallel::common
