#include "parallel/cp/arguments.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "base/error.hpp"

namespace dtrain::parallel::cp {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) text += (d > 0 ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

}  // namespace

PlacedArray placed_array(const CheckedTensor& tensor, const char* name, DType dtype, std::size_t ndim) {
  if (tensor.view.dtype != dtype) {
    invalid(std::string(name) + " is " + dtype_name(tensor.view.dtype) + "; it must be " + dtype_name(dtype));
  }
  if (tensor.layout.shape.size() != ndim) {
    invalid(std::string(name) + " has " + std::to_string(tensor.layout.shape.size()) + " dimensions; it must have " +
            std::to_string(ndim));
  }
  return PlacedArray{name, tensor.view, tensor.layout.shape};
}

void expect_shape(const PlacedArray& array, const std::vector<std::int64_t>& shape) {
  if (array.shape != shape) {
    invalid(std::string(array.name) + " has shape " + shape_text(array.shape) + "; it must be " + shape_text(shape));
  }
}

AttentionInputs check_attention_inputs(PlacedArray q, PlacedArray k, PlacedArray v, int causal, double scale) {
  AttentionInputs in{std::move(q), std::move(k), std::move(v), {}};
  expect_shape(in.v, in.k.shape);
  for (const PlacedArray* array : {&in.q, &in.k}) {
    for (std::int64_t extent : array->shape) {
      if (extent == 0) {
        invalid(std::string(array->name) + " has shape " + shape_text(array->shape) + " with a zero dimension");
      }
    }
  }
  AttentionShape& shape = in.shape;
  shape.q_rows = in.q.shape[0];
  shape.q_heads = in.q.shape[1];
  shape.head_dim = in.q.shape[2];
  shape.kv_rows = in.k.shape[0];
  shape.kv_heads = in.k.shape[1];
  if (in.k.shape[2] != shape.head_dim) {
    invalid("k has head dimension " + std::to_string(in.k.shape[2]) + " but q " + std::to_string(shape.head_dim));
  }
  if (shape.q_heads % shape.kv_heads != 0) {
    invalid("q has " + std::to_string(shape.q_heads) + " heads, not a multiple of the " +
            std::to_string(shape.kv_heads) + " heads of k and v");
  }
  if (causal != 0 && causal != 1) invalid("causal is " + std::to_string(causal) + "; it must be 0 or 1");
  shape.causal = causal == 1;
  if (scale == 0.0) {
    shape.scale = 1.0 / std::sqrt(static_cast<double>(shape.head_dim));
  } else if (!(scale > 0.0) || !std::isfinite(scale)) {
    invalid("scale is " + std::to_string(scale) + "; it must be 0 (1/sqrt(d)) or positive and finite");
  } else {
    shape.scale = scale;
  }
  return in;
}

std::vector<std::int64_t> output_shape(const AttentionShape& shape) {
  return {shape.q_rows, shape.q_heads, shape.head_dim};
}

std::vector<std::int64_t> lse_shape(const AttentionShape& shape) { return {shape.q_rows, shape.q_heads}; }

void refuse_overlap(const std::vector<const PlacedArray*>& outputs, const std::vector<const PlacedArray*>& inputs) {
  for (const PlacedArray* output : outputs) {
    for (const std::vector<const PlacedArray*>* others : {&outputs, &inputs}) {
      for (const PlacedArray* other : *others) {
        if (other != nullptr && other != output && views_overlap(output->view, other->view)) {
          invalid(std::string(output->name) + " overlaps " + other->name);
        }
      }
    }
  }
}

}  // namespace dtrain::parallel::cp
