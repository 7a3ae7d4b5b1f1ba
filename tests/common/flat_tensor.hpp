// A one-dimensional DLTensor over a plain buffer, in host memory unless
// `device` says otherwise: a test's data as the C API and the
// communicator's DLTensor calls take it.
#pragma once

#include <cstdint>

#include <dlpack/dlpack.h>

#include "base/dtype.hpp"

namespace dtrain {

class FlatTensor {
 public:
  FlatTensor(void* data, std::int64_t count, DType dtype, DLDevice device = {kDLCPU, 0}) : shape_(count) {
    tensor_.data = data;
    tensor_.device = device;
    tensor_.ndim = 1;
    tensor_.dtype = dtype_to_dlpack(dtype);
    tensor_.shape = &shape_;
  }
  FlatTensor(const FlatTensor&) = delete;  // tensor_.shape points into this object
  FlatTensor& operator=(const FlatTensor&) = delete;

  DLTensor* get() { return &tensor_; }
  const DLTensor* get() const { return &tensor_; }

 private:
  std::int64_t shape_;
  DLTensor tensor_{};
};

}  // namespace dtrain
