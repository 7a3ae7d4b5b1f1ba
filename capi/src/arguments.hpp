// DLTensors become views here, and only here: the core takes checked views
// (base/tensor.hpp) and never reads a DLTensor itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include <dlpack/dlpack.h>

#include "base/tensor.hpp"
#include "base/tensor_list.hpp"

namespace dtrain::capi {

// The view of `tensor` (base's check_tensor with this process's CUDA
// devices), naming `name` in what it refuses.
TensorView view_of(const DLTensor* tensor, const char* name);

// `tensor` in host memory, with its layout (base's check_host_tensor: CUDA
// memory is DT_ERR_UNSUPPORTED), for calls with host kernels only; and the
// same kept for a collective call to raise inside the ranks' agreement.
CheckedTensor host_tensor(const DLTensor* tensor, const char* name);
ParsedTensor parsed_host_tensor(const DLTensor* tensor, const char* name);

// The views of a C array of `n` tensors for a collective call: a NULL
// array said to hold some is refused naming `array`, and each tensor is
// checked as `<list>[i]` (base's check_tensors, on one device). A refusal
// is kept for the core to raise inside the ranks' agreement.
ParsedTensors tensor_list(const DLTensor* const* tensors, std::size_t n, const char* array, const char* list);

// The DLTensor the C API hands out for `view` (memory the library owns, or a
// buffer it passes to a callback): `ndim` dimensions at `shape`, which must
// outlive it.
DLTensor describe(const TensorView& view, const std::int64_t* shape, int ndim);

}  // namespace dtrain::capi
