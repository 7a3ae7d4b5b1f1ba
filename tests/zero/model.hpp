// Parameters for tests that need a model's shape but not its math: flat
// parameters of `counts` elements each, one dtype, all zero.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

#include "base/dtype.hpp"

namespace dtrain::test {

class FlatParameters {
 public:
  FlatParameters(const std::vector<std::int64_t>& counts, DType dtype) : shapes_(counts.size()) {
    for (std::size_t i = 0; i < counts.size(); ++i) {
      shapes_[i] = {counts[i]};
      // 4-byte words cover every dtype used here.
      storage_.emplace_back(static_cast<std::size_t>(counts[i]), 0.0f);
      DLTensor tensor{};
      tensor.data = storage_.back().data();
      tensor.device = {kDLCPU, 0};
      tensor.ndim = 1;
      tensor.shape = shapes_[i].data();
      tensor.dtype = dtype_to_dlpack(dtype);
      tensors_.push_back(tensor);
    }
  }
  DLTensor& tensor(std::size_t i) { return tensors_[i]; }
  std::vector<const DLTensor*> pointers() const {
    std::vector<const DLTensor*> result;
    for (const DLTensor& tensor : tensors_) result.push_back(&tensor);
    return result;
  }

 private:
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<std::vector<float>> storage_;
  std::vector<DLTensor> tensors_;
};

}  // namespace dtrain::test
