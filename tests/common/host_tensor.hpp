// Test helper: a host array with the DLTensor that describes it.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include <dlpack/dlpack.h>

namespace dtrain::testing {

template <typename T>
DLDataType dlpack_dtype_of() {
  if constexpr (std::is_same_v<T, float>) return {kDLFloat, 32, 1};
  if constexpr (std::is_same_v<T, double>) return {kDLFloat, 64, 1};
  if constexpr (std::is_same_v<T, std::int32_t>) return {kDLInt, 32, 1};
  if constexpr (std::is_same_v<T, std::int64_t>) return {kDLInt, 64, 1};
  if constexpr (std::is_same_v<T, std::int8_t>) return {kDLInt, 8, 1};
  if constexpr (std::is_same_v<T, std::uint8_t>) return {kDLUInt, 8, 1};
}

template <typename T>
struct HostTensor {
  std::vector<T> values;
  std::vector<std::int64_t> shape;
  DLTensor tensor{};

  explicit HostTensor(std::size_t count, T fill = T{}) : values(count, fill), shape{std::int64_t(count)} {
    tensor.data = values.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = 1;
    tensor.dtype = dlpack_dtype_of<T>();
    tensor.shape = shape.data();
  }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  DLTensor* operator&() { return &tensor; }
  T& operator[](std::size_t i) { return values[i]; }
};

}  // namespace dtrain::testing
