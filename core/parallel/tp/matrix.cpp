#include "parallel/tp/matrix.hpp"

#include "base/error.hpp"

namespace dtrain::parallel::tp {

void expect_shape(const Matrix& m, const char* name, std::int64_t rows, std::int64_t cols) {
  if (m.rows != rows || m.cols != cols) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " is " + shape_text(m.rows, m.cols) + " but must be " +
                                       shape_text(rows, cols));
  }
}

void expect_count(const TensorView& v, const char* name, std::int64_t count) {
  if (v.count != count) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " has " + std::to_string(v.count) +
                                       " elements but must have " + std::to_string(count));
  }
}

void expect_divisible(std::int64_t extent, const std::string& what, int size) {
  if (extent % size != 0) {
    raise(DT_ERR_INVALID_ARGUMENT, what + " (" + std::to_string(extent) + ") does not divide by tp = " +
                                       std::to_string(size) + " (the library does not pad)");
  }
}

void expect_dtype(const TensorView& v, const char* name, DType dtype) {
  if (v.dtype != dtype) {
    raise(DT_ERR_INVALID_ARGUMENT,
          std::string(name) + " is " + dtype_name(v.dtype) + " but must be " + dtype_name(dtype));
  }
}

}  // namespace dtrain::parallel::tp
