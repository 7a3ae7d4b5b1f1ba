// Test helpers: DLTensors over vectors, parsed for the core, and catching the library's errors.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/error.hpp"
#include "common/parsed_tensors.hpp"
#include "ucx/harness.hpp"

namespace dtrain::test {

// DLTensors over caller-owned buffers, kept together with their shapes.
class TensorList {
 public:
  void add(void* data, DType dtype, std::vector<std::int64_t> shape) {
    shapes_.push_back(std::move(shape));
    DLTensor t{};
    t.data = data;
    t.device = {kDLCPU, 0};
    t.dtype = dtype_to_dlpack(dtype);
    tensors_.push_back(t);
  }
  template <typename T>
  void add(std::vector<T>& buffer, DType dtype, std::vector<std::int64_t> shape) {
    add(buffer.data(), dtype, std::move(shape));
  }

  // The list as the C API parses it for the core, each tensor named
  // `<list>[i]`.
  ParsedTensors get(const char* list = "gradients") {
    pointers_.clear();
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      tensors_[i].ndim = static_cast<int>(shapes_[i].size());
      tensors_[i].shape = shapes_[i].data();
      pointers_.push_back(&tensors_[i]);
    }
    return testing::parsed(pointers_, list);
  }

 private:
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<DLTensor> tensors_;
  std::vector<const DLTensor*> pointers_;
};

struct Caught {
  dt_status status = DT_OK;
  std::string message;
};

// Runs `body` and returns the dtrain::Error it throws (status DT_OK if none).
template <typename Body>
Caught catch_error(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return {e.status(), e.what()};
  }
  return {};
}

}  // namespace dtrain::test
