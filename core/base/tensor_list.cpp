#include "base/tensor_list.hpp"

#include <algorithm>
#include <numeric>

#include "base/error.hpp"

namespace dtrain {

std::string to_string(const TensorLayout& layout) {
  std::string text = std::string(dtype_name(layout.dtype)) + "[";
  for (std::size_t d = 0; d < layout.shape.size(); ++d) {
    text += (d ? ", " : "") + std::to_string(layout.shape[d]);
  }
  return text + "]";
}

namespace {

// Two tensors that share bytes would each be written with the other's
// result; with compact tensors, overlapping byte ranges are the whole test.
void refuse_overlaps(const std::vector<CheckedTensor>& tensors, const char* list) {
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::erase_if(order, [&](std::size_t i) { return tensors[i].view.count == 0; });
  auto begin = [&](std::size_t i) { return reinterpret_cast<std::uintptr_t>(tensors[i].view.data); };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return begin(a) < begin(b); });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t prev = order[k - 1];
    const std::size_t next = order[k];
    if (begin(prev) + tensors[prev].view.bytes() > begin(next)) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(list) + "[" + std::to_string(std::min(prev, next)) + "] and " +
                                         list + "[" + std::to_string(std::max(prev, next)) +
                                         "] overlap in memory");
    }
  }
}

// Device kernels work on one device, and one bucket cannot span two.
void refuse_scattering(const std::vector<CheckedTensor>& tensors, const char* list) {
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    if (!same_place(tensors[i].view, tensors[0].view)) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(list) + "[" + std::to_string(i) + "] is " +
                                         place_name(tensors[i].view) + ", but " + list + "[0] is " +
                                         place_name(tensors[0].view) + "; all must be on one device");
    }
  }
}

std::string indexed(const char* name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

}  // namespace

CheckedTensor with_layout(const DLTensor* tensor, const TensorView& view) {
  return {view, {view.dtype, std::vector<std::int64_t>(tensor->shape, tensor->shape + tensor->ndim)}};
}

std::vector<CheckedTensor> check_tensors(std::span<const DLTensor* const> tensors, const char* list,
                                         Placement placement, const CudaDevices& cuda) {
  std::vector<CheckedTensor> checked;
  checked.reserve(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::string name = indexed(list, i);
    const TensorView view = placement == Placement::host ? check_host_tensor(tensors[i], name.c_str())
                                                         : check_tensor(tensors[i], name.c_str(), cuda);
    checked.push_back(with_layout(tensors[i], view));
    if (placement == Placement::one_device) check_device_alignment(checked.back().view, name.c_str());
  }
  refuse_overlaps(checked, list);
  if (placement == Placement::one_device) refuse_scattering(checked, list);
  return checked;
}

std::vector<CheckedTensor> check_tensor_array(const DLTensor* tensors, std::size_t n, const char* array,
                                              const CudaDevices& cuda) {
  if (tensors == nullptr && n > 0) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(array) + " is NULL but n = " + std::to_string(n));
  }
  std::vector<CheckedTensor> checked;
  checked.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    checked.push_back(with_layout(&tensors[i], check_tensor(&tensors[i], indexed(array, i).c_str(), cuda)));
  }
  return checked;
}

}  // namespace dtrain
