// A checked view of a caller's DLTensor: what every module works on after the
// C API has validated its arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <dlpack/dlpack.h>

#include "base/dtype.hpp"

namespace dtrain {

enum class Memory { host, cuda };

struct TensorView {
  void* data = nullptr;     // first element (byte_offset applied)
  std::int64_t count = 0;   // number of elements
  DType dtype = DType::f32;
  Memory memory = Memory::host;
  int device_id = 0;
  // For CUDA memory: the cudaStream_t the operation using this view is
  // ordered on (the caller's `stream` argument); nullptr means the backend's
  // own stream. Host memory ignores it.
  void* stream = nullptr;

  std::size_t bytes() const { return static_cast<std::size_t>(count) * dtype_size(dtype); }
  // The view of elements [first, first + n).
  TensorView slice(std::int64_t first, std::int64_t n) const;
};

// What this process can do with kDLCUDA tensors. The device layer knows
// (device::cuda_devices()); base only applies it, so that it depends on no
// layer above it.
struct CudaDevices {
  int count = 0;         // usable CUDA devices
  std::string unusable;  // why count is 0, completing "CUDA tensors need a CUDA device, and ..."
};

// A view of `count` elements of `dtype` at `data`, in host memory.
TensorView host_view(void* data, std::int64_t count, DType dtype);

// "in host memory" or "on CUDA device 1", for messages.
std::string place_name(const TensorView& view);
// Both in host memory, or both on the same CUDA device.
bool same_place(const TensorView& a, const TensorView& b);
// Whether the memory of `a` and `b` overlaps (an empty view overlaps nothing).
bool views_overlap(const TensorView& a, const TensorView& b);
// Throws DT_ERR_INVALID_ARGUMENT unless a CUDA view's data is aligned to its
// element size, as device kernels require; host views always pass.
void check_device_alignment(const TensorView& view, const char* arg);

// Validates `tensor` and returns its view; throws DT_ERR_INVALID_ARGUMENT (or
// DT_ERR_UNSUPPORTED for CUDA memory this build or machine cannot use) with a
// message naming `arg`: NULL tensor, negative ndim or dimension, NULL shape,
// NULL data with elements, unsupported dtype or device, non-compact strides,
// an element count or byte size that overflows. kDLCUDA tensors are accepted
// (Memory::cuda) when `cuda` has devices and device_id names one. Code that
// accepts CUDA tensors calls device::check_tensor(), which passes this
// machine's devices.
TensorView check_tensor(const DLTensor* tensor, const char* arg, const CudaDevices& cuda);

// check_tensor() for code that only has host kernels: kDLCUDA is refused
// with DT_ERR_UNSUPPORTED ("<arg>: CUDA tensors are not supported here ...")
// whether or not a device is present.
TensorView check_host_tensor(const DLTensor* tensor, const char* arg);

}  // namespace dtrain
