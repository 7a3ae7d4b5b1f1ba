#include "parallel/moe/matrix.hpp"

#include <string>

#include "base/error.hpp"

namespace dtrain::parallel::moe {

namespace {

std::string extent_text(std::int64_t extent) { return extent < 0 ? "any" : std::to_string(extent); }

Matrix checked(const DLTensor* tensor, const char* name, DType dtype, dt_status wrong_dtype, int ndim,
               std::int64_t rows, std::int64_t cols) {
  const TensorView view = check_host_tensor(tensor, name);
  if (view.dtype != dtype) {
    raise(wrong_dtype, std::string(name) + " is " + dtype_name(view.dtype) + "; it must be " + dtype_name(dtype));
  }
  const std::string wanted = ndim == 1 ? "[" + extent_text(cols) + "]"
                                       : "[" + extent_text(rows) + ", " + extent_text(cols) + "]";
  if (tensor->ndim != ndim) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " has " + std::to_string(tensor->ndim) +
                                       " dimensions; its shape must be " + wanted);
  }
  const std::int64_t found_rows = ndim == 1 ? 1 : tensor->shape[0];
  const std::int64_t found_cols = tensor->shape[ndim - 1];
  if ((ndim == 2 && rows >= 0 && found_rows != rows) || (cols >= 0 && found_cols != cols)) {
    const std::string found = ndim == 1 ? "[" + std::to_string(found_cols) + "]"
                                        : "[" + std::to_string(found_rows) + ", " + std::to_string(found_cols) + "]";
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " has shape " + found + "; it must be " + wanted);
  }
  return Matrix{view, found_rows, found_cols};
}

TensorView host_view(void* data, std::int64_t count, DType dtype) {
  TensorView view;
  view.data = data;
  view.count = count;
  view.dtype = dtype;
  return view;
}

}  // namespace

Matrix float_matrix(const DLTensor* tensor, const char* name, std::int64_t rows, std::int64_t cols) {
  return checked(tensor, name, DType::f32, DT_ERR_UNSUPPORTED, 2, rows, cols);
}

Matrix index_matrix(const DLTensor* tensor, const char* name, std::int64_t rows, std::int64_t cols) {
  return checked(tensor, name, DType::i64, DT_ERR_INVALID_ARGUMENT, 2, rows, cols);
}

Matrix index_vector(const DLTensor* tensor, const char* name, std::int64_t length) {
  return checked(tensor, name, DType::i64, DT_ERR_INVALID_ARGUMENT, 1, 1, length);
}

Matrix host_f32(float* data, std::int64_t rows, std::int64_t cols) {
  return Matrix{host_view(data, rows * cols, DType::f32), rows, cols};
}

Matrix host_i64(std::int64_t* data, std::int64_t rows, std::int64_t cols) {
  return Matrix{host_view(data, rows * cols, DType::i64), rows, cols};
}

void check_disjoint(const Matrix& a, const char* a_name, const Matrix& b, const char* b_name) {
  const auto* a_first = static_cast<const char*>(a.view.data);
  const auto* b_first = static_cast<const char*>(b.view.data);
  if (a.view.bytes() == 0 || b.view.bytes() == 0) return;
  if (a_first < b_first + b.view.bytes() && b_first < a_first + a.view.bytes()) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(a_name) + " overlaps " + b_name);
  }
}

}  // namespace dtrain::parallel::moe
