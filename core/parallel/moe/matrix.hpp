// The tensors MoE calls take: host matrices (or vectors) of a fixed dtype
// and an exact shape, checked once so that the routing and exchange code can
// index them freely. The C API parsed them (host memory only) already.
#pragma once

#include <cstdint>

#include "base/tensor_list.hpp"

namespace dtrain::parallel::moe {

struct Matrix {
  TensorView view;
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  float* f32() const { return static_cast<float*>(view.data); }
  std::int64_t* i64() const { return static_cast<std::int64_t*>(view.data); }
};

// A [rows, cols] float32 tensor: other shapes are DT_ERR_INVALID_ARGUMENT,
// other dtypes DT_ERR_UNSUPPORTED, naming `name`. rows or cols negative: any
// extent.
Matrix float_matrix(const CheckedTensor& tensor, const char* name, std::int64_t rows, std::int64_t cols);
// The same for int64 indices and counts, where another dtype is
// DT_ERR_INVALID_ARGUMENT.
Matrix index_matrix(const CheckedTensor& tensor, const char* name, std::int64_t rows, std::int64_t cols);
// A one-dimensional int64 tensor of `length` elements, as a 1 x length matrix.
Matrix index_vector(const CheckedTensor& tensor, const char* name, std::int64_t length);

// A [count, rows, cols] float32 tensor (count matrices one after the other),
// as a (count * rows) x cols matrix; checked as float_matrix().
Matrix float_stack(const CheckedTensor& tensor, const char* name, std::int64_t count, std::int64_t rows,
                   std::int64_t cols);

// A matrix over memory the caller keeps alive (scratch rows, saved rows).
Matrix host_f32(float* data, std::int64_t rows, std::int64_t cols);
Matrix host_i64(std::int64_t* data, std::int64_t rows, std::int64_t cols);

// Throws DT_ERR_INVALID_ARGUMENT when the two overlap in memory (an output
// given as an input).
void check_disjoint(const Matrix& a, const char* a_name, const Matrix& b, const char* b_name);

}  // namespace dtrain::parallel::moe
