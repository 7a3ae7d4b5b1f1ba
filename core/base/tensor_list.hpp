// A list of tensors taken together (a model's parameters, its gradients):
// each tensor checked, with the dtype and shape that ranks compare before
// working on the list together.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/parsed.hpp"
#include "base/tensor.hpp"

namespace dtrain {

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

// `tensor`, whose checked view is `view`, with its layout.
CheckedTensor with_layout(const DLTensor* tensor, const TensorView& view);

// Where a list of tensors may live: in host memory only (for code with
// host kernels only), or all on one device, host memory or one CUDA device.
enum class Placement { host, one_device };

// Checks every tensor (check_tensor, naming it `<list>[i]`), refuses tensors
// whose memory overlaps (both would be written), and returns them in order.
// With Placement::host, CUDA tensors are DT_ERR_UNSUPPORTED; with
// one_device, they are accepted where `cuda` has the device (else
// DT_ERR_UNSUPPORTED), aligned to their elements, and every tensor must be
// where `<list>[0]` is (DT_ERR_INVALID_ARGUMENT).
std::vector<CheckedTensor> check_tensors(std::span<const DLTensor* const> tensors, const char* list,
                                         Placement placement, const CudaDevices& cuda);

// The tensors of a C array of `n` DLTensor structs (not pointers), each
// checked (check_tensor, naming it `<array>[i]`) with its layout. A NULL
// array said to hold some is DT_ERR_INVALID_ARGUMENT.
std::vector<CheckedTensor> check_tensor_array(const DLTensor* tensors, std::size_t n, const char* array,
                                              const CudaDevices& cuda);

// A tensor, and a list, as the C API parsed them for a collective call
// (base/parsed.hpp).
using ParsedTensor = Parsed<CheckedTensor>;
using ParsedTensors = Parsed<std::vector<CheckedTensor>>;

}  // namespace dtrain
