#include "parallel/moe/matrix.hpp"

#include <string>
#include <vector>

#include "base/error.hpp"

namespace dtrain::parallel::moe {

namespace {

std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    text += (d > 0 ? ", " : "") + (dims[d] < 0 ? std::string("any") : std::to_string(dims[d]));
  }
  return text + "]";
}

// The view of `tensor` after checking its dtype (`wrong_dtype` when it is
// not `dtype`) and shape against `expected` (-1: any extent); the shape
// found goes to `found`.
TensorView checked(const CheckedTensor& tensor, const char* name, DType dtype, dt_status wrong_dtype,
                   const std::vector<std::int64_t>& expected, std::vector<std::int64_t>& found) {
  const TensorView& view = tensor.view;
  if (view.dtype != dtype) {
    raise(wrong_dtype, std::string(name) + " is " + dtype_name(view.dtype) + "; it must be " + dtype_name(dtype));
  }
  found = tensor.layout.shape;
  bool fits = found.size() == expected.size();
  for (std::size_t d = 0; fits && d < found.size(); ++d) fits = expected[d] < 0 || found[d] == expected[d];
  if (!fits) {
    raise(DT_ERR_INVALID_ARGUMENT,
          std::string(name) + " has shape " + shape_text(found) + "; it must be " + shape_text(expected));
  }
  return view;
}

Matrix checked_matrix(const CheckedTensor& tensor, const char* name, DType dtype, dt_status wrong_dtype,
                      std::int64_t rows, std::int64_t cols) {
  std::vector<std::int64_t> found;
  const TensorView view = checked(tensor, name, dtype, wrong_dtype, {rows, cols}, found);
  return Matrix{view, found[0], found[1]};
}

}  // namespace

Matrix float_matrix(const CheckedTensor& tensor, const char* name, std::int64_t rows, std::int64_t cols) {
  return checked_matrix(tensor, name, DType::f32, DT_ERR_UNSUPPORTED, rows, cols);
}

Matrix index_matrix(const CheckedTensor& tensor, const char* name, std::int64_t rows, std::int64_t cols) {
  return checked_matrix(tensor, name, DType::i64, DT_ERR_INVALID_ARGUMENT, rows, cols);
}

Matrix index_vector(const CheckedTensor& tensor, const char* name, std::int64_t length) {
  std::vector<std::int64_t> found;
  const TensorView view = checked(tensor, name, DType::i64, DT_ERR_INVALID_ARGUMENT, {length}, found);
  return Matrix{view, 1, found[0]};
}

Matrix float_stack(const CheckedTensor& tensor, const char* name, std::int64_t count, std::int64_t rows,
                   std::int64_t cols) {
  std::vector<std::int64_t> found;
  const TensorView view = checked(tensor, name, DType::f32, DT_ERR_UNSUPPORTED, {count, rows, cols}, found);
  return Matrix{view, found[0] * found[1], found[2]};
}

Matrix host_f32(float* data, std::int64_t rows, std::int64_t cols) {
  return Matrix{host_view(data, rows * cols, DType::f32), rows, cols};
}

Matrix host_i64(std::int64_t* data, std::int64_t rows, std::int64_t cols) {
  return Matrix{host_view(data, rows * cols, DType::i64), rows, cols};
}

void check_disjoint(const Matrix& a, const char* a_name, const Matrix& b, const char* b_name) {
  if (views_overlap(a.view, b.view)) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(a_name) + " overlaps " + b_name);
  }
}

}  // namespace dtrain::parallel::moe
