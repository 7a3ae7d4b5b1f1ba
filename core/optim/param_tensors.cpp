#include "optim/param_tensors.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "base/error.hpp"

namespace dtrain::optim {

namespace {

std::string indexed(const char* name, std::size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

void check_pair(const CheckedTensor& param, const CheckedTensor& grad, const ParamTensor& views, std::size_t i) {
  const DType dtype = views.param.dtype;
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) {
    raise(DT_ERR_INVALID_ARGUMENT, indexed("params", i) + ": dtype " + dtype_name(dtype) +
                                       " cannot be optimized (float32, float16, bfloat16)");
  }
  if (views.grad.dtype != dtype) {
    raise(DT_ERR_INVALID_ARGUMENT, indexed("grads", i) + ": dtype " + dtype_name(views.grad.dtype) +
                                       " differs from its parameter's, " + dtype_name(dtype));
  }
  if (param.layout.shape != grad.layout.shape) {
    raise(DT_ERR_INVALID_ARGUMENT, indexed("grads", i) + ": shape " + shape_text(grad.layout.shape) +
                                       " differs from its parameter's, " + shape_text(param.layout.shape));
  }
  if (!same_place(views.param, views.grad)) {
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

std::vector<ParamTensor> check_param_tensors(const std::vector<CheckedTensor>& params,
                                             const std::vector<CheckedTensor>& grads) {
  if (params.empty()) raise(DT_ERR_INVALID_ARGUMENT, "n is 0: an optimizer needs at least one parameter");
  std::vector<ParamTensor> tensors(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    tensors[i] = {params[i].view, grads[i].view};
    check_pair(params[i], grads[i], tensors[i], i);
  }
  check_placement(tensors);
  check_disjoint(tensors);
  return tensors;
}

}  // namespace dtrain::optim
