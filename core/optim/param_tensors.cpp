#include "optim/param_tensors.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/error.hpp"

namespace dtrain::optim {

namespace {

std::string indexed(const char* name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

std::string shape_text(const DLTensor& t) {
  std::string out = "(";
  for (int d = 0; d < t.ndim; ++d) out += (d ? ", " : "") + std::to_string(t.shape[d]);
  return out + (t.ndim == 1 ? ",)" : ")");
}

bool same_shape(const DLTensor& a, const DLTensor& b) {
  if (a.ndim != b.ndim) return false;
  return std::equal(a.shape, a.shape + a.ndim, b.shape);
}

void check_pair(const DLTensor& param, const DLTensor& grad, const ParamTensor& views, std::size_t i) {
  const DType dtype = views.param.dtype;
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) {
    raise(DT_ERR_INVALID_ARGUMENT, indexed("params", i) + ": dtype " + dtype_name(dtype) +
                                       " cannot be optimized (float32, float16, bfloat16)");
  }
  if (views.grad.dtype != dtype) {
    raise(DT_ERR_INVALID_ARGUMENT, indexed("grads", i) + ": dtype " + dtype_name(views.grad.dtype) +
                                       " differs from its parameter's, " + dtype_name(dtype));
  }
  if (!same_shape(param, grad)) {
    raise(DT_ERR_INVALID_ARGUMENT, indexed("grads", i) + ": shape " + shape_text(grad) +
                                       " differs from its parameter's, " + shape_text(param));
  }
  if (param.device.device_type != grad.device.device_type || param.device.device_id != grad.device.device_id) {
    raise(DT_ERR_INVALID_ARGUMENT, indexed("grads", i) + ": not on its parameter's device");
  }
}

void check_placement(const std::vector<ParamTensor>& tensors) {
  const TensorView& first = tensors[0].param;
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    if (!same_place(tensors[i].param, first)) {
      raise(DT_ERR_INVALID_ARGUMENT, indexed("params", i) + ": " + place_name(tensors[i].param) +
                                         ", but params[0] is " + place_name(first) +
                                         "; all tensors of an optimizer must be on one device");
    }
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    for (const auto& [view, name] : {std::pair{&tensors[i].param, "params"}, std::pair{&tensors[i].grad, "grads"}}) {
      check_device_alignment(*view, indexed(name, i).c_str());
    }
  }
}

struct Range {
  std::uintptr_t begin, end;
  std::string name;
};

void check_disjoint(const std::vector<ParamTensor>& tensors) {
  std::vector<Range> ranges;
  ranges.reserve(2 * tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    for (const auto& [view, name] : {std::pair{&tensors[i].param, "params"}, std::pair{&tensors[i].grad, "grads"}}) {
      if (view->count == 0) continue;
      const auto begin = reinterpret_cast<std::uintptr_t>(view->data);
      ranges.push_back({begin, begin + view->bytes(), indexed(name, i)});
    }
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (std::size_t k = 1; k < ranges.size(); ++k) {
    if (ranges[k].begin < ranges[k - 1].end) {
      raise(DT_ERR_INVALID_ARGUMENT, ranges[k - 1].name + " and " + ranges[k].name + " overlap in memory");
    }
  }
}

}  // namespace

std::vector<ParamTensor> check_param_tensors(const DLTensor* params, const DLTensor* grads, std::size_t n,
                                             const CudaDevices& cuda) {
  if (params == nullptr) raise(DT_ERR_INVALID_ARGUMENT, "params is NULL");
  if (grads == nullptr) raise(DT_ERR_INVALID_ARGUMENT, "grads is NULL");
  if (n == 0) raise(DT_ERR_INVALID_ARGUMENT, "n is 0: an optimizer needs at least one parameter");
  std::vector<ParamTensor> tensors(n);
  for (std::size_t i = 0; i < n; ++i) {
    tensors[i].param = check_tensor(&params[i], indexed("params", i).c_str(), cuda);
    tensors[i].grad = check_tensor(&grads[i], indexed("grads", i).c_str(), cuda);
    check_pair(params[i], grads[i], tensors[i], i);
  }
  check_placement(tensors);
  check_disjoint(tensors);
  return tensors;
}

}  // namespace dtrain::optim
