// A one-dimensional DLTensor over a host buffer the library owns, so that a
// strategy can hand its own buffers (buckets, digests) to the communicator.
#pragma once

#include <cstdint>

#include <dlpack/dlpack.h>

#include "base/dtype.hpp"

namespace dtrain::parallel::ddp {

class FlatTensor {
 public:
  FlatTensor(void* data, std::int64_t count, DType dtype) : shape_(count) {
    tensor_.data = data;
    tensor_.device = {kDLCPU, 0};
    tensor_.ndim = 1;
    tensor_.dtype = to_dlpack(dtype);
    tensor_.shape = &shape_;
  }
  FlatTensor(const FlatTensor&) = delete;  // tensor_.shape points into this object
  FlatTensor& operator=(const FlatTensor&) = delete;

  const DLTensor* get() const { return &tensor_; }

 private:
  static DLDataType to_dlpack(DType dtype) {
    switch (dtype) {
      case DType::f32: return {kDLFloat, 32, 1};
      case DType::f64: return {kDLFloat, 64, 1};
      case DType::f16: return {kDLFloat, 16, 1};
      case DType::bf16: return {kDLBfloat, 16, 1};
      case DType::i32: return {kDLInt, 32, 1};
      case DType::i64: return {kDLInt, 64, 1};
      case DType::i8: return {kDLInt, 8, 1};
      case DType::u8: return {kDLUInt, 8, 1};
    }
    return {kDLFloat, 32, 1};
  }

  std::int64_t shape_;
  DLTensor tensor_{};
};

}  // namespace dtrain::parallel::ddp
