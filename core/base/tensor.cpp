#include "base/tensor.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "base/error.hpp"

namespace dtrain {

namespace {

[[noreturn]] void bad(const char* arg, const std::string& what) {
  raise(DT_ERR_INVALID_ARGUMENT, std::string(arg) + ": " + what);
}

constexpr int kMaxDims = 64;

}  // namespace

TensorView TensorView::slice(std::int64_t first, std::int64_t n) const {
  TensorView view = *this;
  view.data = static_cast<char*>(data) + first * static_cast<std::int64_t>(dtype_size(dtype));
  view.count = n;
  return view;
}

TensorView host_view(void* data, std::int64_t count, DType dtype) {
  TensorView view;
  view.data = data;
  view.count = count;
  view.dtype = dtype;
  return view;
}

std::string place_name(const TensorView& view) {
  return view.memory == Memory::host ? std::string("in host memory")
                                     : "on CUDA device " + std::to_string(view.device_id);
}

bool same_place(const TensorView& a, const TensorView& b) {
  return a.memory == b.memory && (a.memory == Memory::host || a.device_id == b.device_id);
}

bool views_overlap(const TensorView& a, const TensorView& b) {
  if (a.bytes() == 0 || b.bytes() == 0) return false;
  const auto* a_first = static_cast<const char*>(a.data);
  const auto* b_first = static_cast<const char*>(b.data);
  return a_first < b_first + b.bytes() && b_first < a_first + a.bytes();
}

void check_device_alignment(const TensorView& view, const char* arg) {
  const std::size_t size = dtype_size(view.dtype);
  if (view.memory == Memory::cuda && reinterpret_cast<std::uintptr_t>(view.data) % size != 0) {
    raise(DT_ERR_INVALID_ARGUMENT,
          std::string(arg) + ": data is not aligned to its " + std::to_string(size) + "-byte elements");
  }
}

TensorView check_tensor(const DLTensor* tensor, const char* arg, const CudaDevices& cuda) {
  if (tensor == nullptr) bad(arg, "tensor is NULL");
  TensorView view;

  auto dtype = dtype_from_dlpack(tensor->dtype);
  if (!dtype) {
    bad(arg, "dtype " + describe_dlpack_dtype(tensor->dtype) +
                 " is not supported (float32, float64, float16, bfloat16, int32, int64, int8, uint8)");
  }
  view.dtype = *dtype;

  switch (tensor->device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      view.memory = Memory::host;
      break;
    case kDLCUDA: {
      // Accepted only where a device is usable: otherwise the pointer could
      // not even be read.
      const int devices = cuda.count;
      if (devices == 0) {
        raise(DT_ERR_UNSUPPORTED, std::string(arg) + ": CUDA tensors need a CUDA device, and " + cuda.unusable);
      }
      if (tensor->device.device_id < 0 || tensor->device.device_id >= devices) {
        bad(arg, "CUDA device " + std::to_string(tensor->device.device_id) + " does not exist (this process sees " +
                     std::to_string(devices) + (devices == 1 ? " device)" : " devices)"));
      }
      view.memory = Memory::cuda;
      break;
    }
    default:
      bad(arg, "device type " + std::to_string(tensor->device.device_type) +
                   " is not supported (kDLCPU, kDLCUDAHost, kDLCUDA)");
  }
  view.device_id = tensor->device.device_id;

  if (tensor->ndim < 0) bad(arg, "ndim " + std::to_string(tensor->ndim) + " is negative");
  if (tensor->ndim > kMaxDims) bad(arg, "ndim " + std::to_string(tensor->ndim) + " exceeds 64");
  if (tensor->ndim > 0 && tensor->shape == nullptr) bad(arg, "shape is NULL with ndim > 0");

  // Overflow checks without divisions: every operation checks its arguments
  // on its way to a small message, where a few divisions would show.
  std::int64_t count = 1;
  for (int d = 0; d < tensor->ndim; ++d) {
    const std::int64_t extent = tensor->shape[d];
    if (extent < 0) bad(arg, "shape[" + std::to_string(d) + "] = " + std::to_string(extent) + " is negative");
    if (__builtin_mul_overflow(count, extent, &count)) bad(arg, "element count overflows");
  }
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<std::int64_t>(dtype_size(view.dtype)), &bytes)) {
    bad(arg, "element count overflows");
  }
  view.count = count;

  // Compact row-major strides; a dimension of extent 1 may carry any stride.
  if (tensor->strides != nullptr && count > 0) {
    std::int64_t expected = 1;
    for (int d = tensor->ndim - 1; d >= 0; --d) {
      if (tensor->shape[d] != 1 && tensor->strides[d] != expected) {
        bad(arg, "strides are not compact row-major (strides[" + std::to_string(d) + "] = " +
                     std::to_string(tensor->strides[d]) + ", expected " + std::to_string(expected) + ")");
      }
      expected *= tensor->shape[d];
    }
  }

  if (tensor->data == nullptr && count > 0) bad(arg, "data is NULL but the tensor has elements");
  if (tensor->byte_offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    bad(arg, "byte_offset overflows");
  }
  view.data = tensor->data ? static_cast<char*>(tensor->data) + tensor->byte_offset : nullptr;
  return view;
}

TensorView check_host_tensor(const DLTensor* tensor, const char* arg) {
  if (tensor != nullptr && tensor->device.device_type == kDLCUDA) {
    raise(DT_ERR_UNSUPPORTED, std::string(arg) +
                                  ": CUDA tensors are not supported here; this operation takes host memory "
                                  "(kDLCPU, kDLCUDAHost)");
  }
  // kDLCUDA was refused above, so what devices exist does not matter.
  return check_tensor(tensor, arg, CudaDevices{});
}

}  // namespace dtrain
