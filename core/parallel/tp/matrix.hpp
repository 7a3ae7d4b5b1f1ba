// A tensor as the tensor-parallel layers see it: rows x cols, where cols is
// the last dimension and rows the product of the others (tokens).
#pragma once

#include <cstdint>
#include <string>

#include "base/tensor.hpp"

namespace dtrain::parallel::tp {

struct Matrix {
  TensorView view;
  std::int64_t rows = 0;
  std::int64_t cols = 0;

  // Rows [first, first + n) (contiguous in a row-major matrix).
  Matrix row_block(std::int64_t first, std::int64_t n) const {
    return {view.slice(first * cols, n * cols), n, cols};
  }
};

// "[rows, cols]" for messages.
inline std::string shape_text(std::int64_t rows, std::int64_t cols) {
  return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
}

// Throws DT_ERR_INVALID_ARGUMENT, naming `name`, unless `m` is rows x cols.
void expect_shape(const Matrix& m, const char* name, std::int64_t rows, std::int64_t cols);
// Throws unless `v` holds `count` elements.
void expect_count(const TensorView& v, const char* name, std::int64_t count);
// Throws unless `extent` divides by `size`, naming what it is.
void expect_divisible(std::int64_t extent, const std::string& what, int size);
// Throws unless `v` has `dtype`.
void expect_dtype(const TensorView& v, const char* name, DType dtype);

}  // namespace dtrain::parallel::tp
