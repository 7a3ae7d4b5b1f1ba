// Test tensors for the device layer, placed where the test binary runs its
// kernels: host memory in dtrain_device_tests, CUDA device 0 in
// dtrain_device_gpu_tests (built with DTRAIN_TEST_ON_GPU), so that one test
// body checks both devices. Values go in and come out as doubles whatever
// the dtype (16-bit ones rounded to nearest even on the way in).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/dtype.hpp"
#include "base/tensor.hpp"
#include "device/cpu/half.hpp"
#ifdef DTRAIN_TEST_ON_GPU
#include "device/cuda/runtime.hpp"
#include "gpu.hpp"
#endif

namespace dtrain::test {

// Skips the test, saying why, where its tensors cannot be placed.
#ifdef DTRAIN_TEST_ON_GPU
#define DT_REQUIRE_PLACE() DT_REQUIRE_GPUS(1)
#else
#define DT_REQUIRE_PLACE() \
  do {                     \
  } while (0)
#endif

// `value` stored as `dtype` and read back: what the kernels see.
inline double stored(DType dtype, double value) {
  using namespace device::cpu;
  switch (dtype) {
    case DType::f16: return half_to_float(float_to_half(static_cast<float>(value)));
    case DType::bf16: return bf16_to_float(float_to_bf16(static_cast<float>(value)));
    case DType::f32: return static_cast<float>(value);
    case DType::i32: return static_cast<std::int32_t>(value);
    case DType::i64: return static_cast<double>(static_cast<std::int64_t>(value));
    default: return value;
  }
}

class PlacedTensor {
 public:
  PlacedTensor(DType dtype, const std::vector<double>& values) : dtype_(dtype), count_(values.size()) {
    bytes_.resize(count_ * dtype_size(dtype));
    for (std::size_t i = 0; i < count_; ++i) write(i, values[i]);
#ifdef DTRAIN_TEST_ON_GPU
    device_ = to_device(bytes_);
#endif
  }

  // `count` elements of NaN (or -1 for integers): outputs, so that an
  // element a kernel forgets to write shows.
  static PlacedTensor poisoned(DType dtype, std::size_t count) {
    const double poison = dtype_is_floating(dtype) ? std::numeric_limits<double>::quiet_NaN() : -1.0;
    return PlacedTensor(dtype, std::vector<double>(count, poison));
  }

  TensorView view() {
    TensorView v;
    v.count = static_cast<std::int64_t>(count_);
    v.dtype = dtype_;
#ifdef DTRAIN_TEST_ON_GPU
    v.data = device_.data();
    v.memory = Memory::cuda;
#else
    v.data = bytes_.data();
#endif
    return v;
  }

  std::vector<double> read() {
#ifdef DTRAIN_TEST_ON_GPU
    bytes_ = to_host<unsigned char>(device_.data(), bytes_.size());
#endif
    std::vector<double> values(count_);
    for (std::size_t i = 0; i < count_; ++i) values[i] = element(i);
    return values;
  }

 private:
  void write(std::size_t i, double value) {
    using namespace device::cpu;
    unsigned char* at = bytes_.data() + i * dtype_size(dtype_);
    switch (dtype_) {
      case DType::f32: store(at, static_cast<float>(value)); break;
      case DType::f64: store(at, value); break;
      case DType::f16: store(at, float_to_half(static_cast<float>(value))); break;
      case DType::bf16: store(at, float_to_bf16(static_cast<float>(value))); break;
      case DType::i32: store(at, static_cast<std::int32_t>(value)); break;
      case DType::i64: store(at, static_cast<std::int64_t>(value)); break;
      default: FAIL() << "no test values for " << dtype_name(dtype_);
    }
  }

  double element(std::size_t i) const {
    using namespace device::cpu;
    const unsigned char* at = bytes_.data() + i * dtype_size(dtype_);
    switch (dtype_) {
      case DType::f32: return load<float>(at);
      case DType::f64: return load<double>(at);
      case DType::f16: return half_to_float(load<std::uint16_t>(at));
      case DType::bf16: return bf16_to_float(load<std::uint16_t>(at));
      case DType::i32: return load<std::int32_t>(at);
      case DType::i64: return static_cast<double>(load<std::int64_t>(at));
      default: return 0;
    }
  }

  template <typename T>
  static void store(unsigned char* at, T value) {
    std::memcpy(at, &value, sizeof value);
  }
  template <typename T>
  static T load(const unsigned char* at) {
    T value;
    std::memcpy(&value, at, sizeof value);
    return value;
  }

  DType dtype_;
  std::size_t count_;
  std::vector<unsigned char> bytes_;
#ifdef DTRAIN_TEST_ON_GPU
  device::cuda::DeviceBuffer device_;
#endif
};

// Uniform values in [low, high) from a fixed seed, rounded to `dtype`.
std::vector<double> random_values(DType dtype, std::size_t count, unsigned seed, double low = -1.0,
                                  double high = 1.0);

// The largest unit in the last place relative to a value of `dtype` (2^-23
// for f32): the bound of one rounding to nearest is half of it.
double epsilon(DType dtype);

// Half the smallest positive value of `dtype`: how far a result that
// underflows may land from the exact one.
double underflow(DType dtype);

// Checks got[i] against want[i] within abs + rel * |want[i]|, naming the
// first few that are not (and `what`).
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double rel, double abs,
                 const std::string& what);

}  // namespace dtrain::test
