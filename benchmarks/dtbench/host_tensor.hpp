// A host tensor that owns its data, for the dtbench subcommands that call
// libdtrain's functional APIs (cp, tp) through the public C API.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace dtbench {

// float32 or int64 elements, zero-initialised, row-major.
template <typename T>
class HostTensor {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::int64_t>, "float32 or int64");

 public:
  explicit HostTensor(std::vector<std::int64_t> shape) : shape_(std::move(shape)) {
    std::int64_t count = 1;
    for (std::int64_t n : shape_) count *= n;
    data_.assign(static_cast<std::size_t>(count), T{});
    tensor_.data = data_.data();
    tensor_.device = {kDLCPU, 0};
    tensor_.ndim = static_cast<int>(shape_.size());
    tensor_.dtype = std::is_same_v<T, float> ? DLDataType{kDLFloat, 32, 1} : DLDataType{kDLInt, 64, 1};
    tensor_.shape = shape_.data();
  }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  DLTensor* get() { return &tensor_; }
  std::vector<T>& data() { return data_; }

  // Values in [-scale, scale) from a fixed linear congruential sequence: the
  // same on every rank and every run.
  void fill_uniform(std::uint32_t seed, float scale) {
    std::uint32_t state = seed;
    for (T& x : data_) {
      state = state * 1664525U + 1013904223U;
      x = static_cast<T>(scale * (static_cast<float>(state >> 8) / static_cast<float>(1U << 23) - 1.0F));
    }
  }

 private:
  std::vector<std::int64_t> shape_;
  std::vector<T> data_;
  DLTensor tensor_{};
};

}  // namespace dtbench
