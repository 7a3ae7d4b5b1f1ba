// The checks of the attention calls' tensors (dtrain/cp.h), which the C API
// parsed and placed (host memory, or the call's CUDA device): the dtype and
// rank each argument must have, shapes that agree with the queries', outputs
// that overlap nothing. Each refusal names the argument.
#pragma once

#include <cstdint>
#include <vector>

#include "base/tensor_list.hpp"
#include "device/attention.hpp"

namespace dtrain::parallel::cp {

using device::AttentionShape;

// A caller's tensor accepted with one dtype and rank, where the call runs.
struct PlacedArray {
  const char* name = "";
  TensorView view;
  std::vector<std::int64_t> shape;

  template <typename T>
  T* data() const {
    return static_cast<T*>(view.data);
  }
};

// DT_ERR_INVALID_ARGUMENT, naming `name`, for another dtype or number of
// dimensions.
PlacedArray placed_array(const CheckedTensor& tensor, const char* name, DType dtype, std::size_t ndim);

// DT_ERR_INVALID_ARGUMENT unless `array` has exactly `shape`.
void expect_shape(const PlacedArray& array, const std::vector<std::int64_t>& shape);

// Queries, keys and values checked together, and the shape of their attention.
struct AttentionInputs {
  PlacedArray q, k, v;
  AttentionShape shape;
};

// q [s_q, h_q, d], k and v [s_kv, h_kv, d] (float32 arrays of 3
// dimensions), no dimension zero, h_kv dividing h_q; causal 0 or 1; scale 0
// (1/sqrt(d)) or positive and finite.
AttentionInputs check_attention_inputs(PlacedArray q, PlacedArray k, PlacedArray v, int causal, double scale);

// The outputs' shapes: o (and tensors like it) [s_q, h_q, d], lse [s_q, h_q].
std::vector<std::int64_t> output_shape(const AttentionShape& shape);
std::vector<std::int64_t> lse_shape(const AttentionShape& shape);

// DT_ERR_INVALID_ARGUMENT when an output's memory overlaps that of any
// other tensor listed (outputs or inputs; nullptr entries are skipped),
// naming both.
void refuse_overlap(const std::vector<const PlacedArray*>& outputs, const std::vector<const PlacedArray*>& inputs);

}  // namespace dtrain::parallel::cp
