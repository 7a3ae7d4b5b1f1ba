#include "arguments.hpp"

#include <span>
#include <string>

#include "base/error.hpp"
#include "device/probe.hpp"

namespace dtrain::capi {

TensorView view_of(const DLTensor* tensor, const char* name) {
  return check_tensor(tensor, name, device::cuda_devices());
}

CheckedTensor host_tensor(const DLTensor* tensor, const char* name) {
  return with_layout(tensor, check_host_tensor(tensor, name));
}

ParsedTensor parsed_host_tensor(const DLTensor* tensor, const char* name) {
  return parse([&] { return host_tensor(tensor, name); });
}

ParsedTensors tensor_list(const DLTensor* const* tensors, std::size_t n, const char* array, const char* list) {
  return parse([&] {
    if (tensors == nullptr && n > 0) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(array) + " is NULL but n = " + std::to_string(n));
    }
    return check_tensors(std::span(tensors, n), list, Placement::one_device, device::cuda_devices());
  });
}

DLTensor describe(const TensorView& view, const std::int64_t* shape, int ndim) {
  DLTensor tensor{};
  tensor.data = view.data;
  tensor.device = view.memory == Memory::cuda ? DLDevice{kDLCUDA, view.device_id} : DLDevice{kDLCPU, 0};
  tensor.ndim = ndim;
  tensor.dtype = dtype_to_dlpack(view.dtype);
  // DLTensor::shape is not const-qualified; callers only read it.
  tensor.shape = const_cast<std::int64_t*>(shape);
  return tensor;
}

}  // namespace dtrain::capi
