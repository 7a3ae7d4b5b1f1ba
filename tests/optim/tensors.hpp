// Test helpers: sets of parameter or gradient tensors of odd sizes in one
// dtype, with the DLTensor array the C API takes, and values read and written
// as floats whatever the dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <dlpack/dlpack.h>

#include "device/cpu/half.hpp"
#include "device/probe.hpp"
#include "optim/param_tensors.hpp"

namespace dtrain::testing {

enum class Precision { f32, f16, bf16 };

inline DLDataType dlpack_dtype(Precision p) {
  switch (p) {
    case Precision::f16: return {kDLFloat, 16, 1};
    case Precision::bf16: return {kDLBfloat, 16, 1};
    default: return {kDLFloat, 32, 1};
  }
}

// Rounds to what `p` can hold, and back.
inline float round_to(Precision p, float x) {
  using namespace dtrain::device::cpu;
  switch (p) {
    case Precision::f16: return half_to_float(float_to_half(x));
    case Precision::bf16: return bf16_to_float(float_to_bf16(x));
    default: return x;
  }
}

// Shapes of odd sizes (vector tails everywhere), one of them 2-D and one a
// single element.
inline std::vector<std::vector<std::int64_t>> odd_shapes() { return {{37}, {1}, {5, 13}, {1003}, {3}}; }

class TensorSet {
 public:
  TensorSet(Precision precision, std::vector<std::vector<std::int64_t>> shapes)
      : precision_(precision), shapes_(std::move(shapes)) {
    const std::size_t elem = precision == Precision::f32 ? 4 : 2;
    for (const auto& shape : shapes_) {
      std::int64_t count = 1;
      for (std::int64_t d : shape) count *= d;
      counts_.push_back(count);
      bytes_.emplace_back(static_cast<std::size_t>(count) * elem);
    }
    for (std::size_t i = 0; i < shapes_.size(); ++i) {
      DLTensor t{};
      t.data = bytes_[i].data();
      t.device = {kDLCPU, 0};
      t.ndim = static_cast<int>(shapes_[i].size());
      t.dtype = dlpack_dtype(precision);
      t.shape = shapes_[i].data();
      tensors_.push_back(t);
    }
  }
  TensorSet(const TensorSet&) = delete;
  TensorSet& operator=(const TensorSet&) = delete;

  std::size_t size() const { return tensors_.size(); }
  std::int64_t count(std::size_t i) const { return counts_[i]; }
  Precision precision() const { return precision_; }
  DLTensor* tensors() { return tensors_.data(); }
  DLTensor& tensor(std::size_t i) { return tensors_[i]; }

  float get(std::size_t i, std::int64_t j) const {
    using namespace dtrain::device::cpu;
    const unsigned char* at = bytes_[i].data();
    if (precision_ == Precision::f32) {
      float v;
      std::memcpy(&v, at + 4 * j, 4);
      return v;
    }
    std::uint16_t h;
    std::memcpy(&h, at + 2 * j, 2);
    return precision_ == Precision::f16 ? half_to_float(h) : bf16_to_float(h);
  }

  // Stores `x` rounded to this set's dtype.
  void set(std::size_t i, std::int64_t j, float x) {
    using namespace dtrain::device::cpu;
    unsigned char* at = bytes_[i].data();
    if (precision_ == Precision::f32) {
      std::memcpy(at + 4 * j, &x, 4);
      return;
    }
    const std::uint16_t h = precision_ == Precision::f16 ? float_to_half(x) : float_to_bf16(x);
    std::memcpy(at + 2 * j, &h, 2);
  }

  // Every value, widened to double.
  std::vector<std::vector<double>> values() const {
    std::vector<std::vector<double>> out(size());
    for (std::size_t i = 0; i < size(); ++i) {
      for (std::int64_t j = 0; j < count(i); ++j) out[i].push_back(get(i, j));
    }
    return out;
  }

  // The raw bytes, to check that nothing changed.
  const std::vector<std::vector<unsigned char>>& bytes() const { return bytes_; }

 private:
  Precision precision_;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<std::int64_t> counts_;
  std::vector<std::vector<unsigned char>> bytes_;
  std::vector<DLTensor> tensors_;
};

// Deterministic values in [lo, hi): the same sequence on every platform.
class Sequence {
 public:
  explicit Sequence(std::uint64_t seed) : state_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float next(float lo, float hi) {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    const double unit = static_cast<double>(state_ >> 11) / 9007199254740992.0;
    return static_cast<float>(lo + (hi - lo) * unit);
  }

 private:
  std::uint64_t state_;
};

// Parameters away from zero (so relative errors are meaningful): magnitude
// in [0.5, 2), either sign.
inline void fill_params(TensorSet& set, std::uint64_t seed) {
  Sequence seq(seed);
  for (std::size_t i = 0; i < set.size(); ++i) {
    for (std::int64_t j = 0; j < set.count(i); ++j) {
      const float magnitude = seq.next(0.5f, 2.0f);
      set.set(i, j, seq.next(0.0f, 1.0f) < 0.5f ? -magnitude : magnitude);
    }
  }
}

// Gradients of magnitude in [0.01, 1) times `scale`, either sign: none so
// small that a 16-bit dtype would hold it as a subnormal.
inline void fill_grads(TensorSet& set, std::uint64_t seed, float scale = 1.0f) {
  Sequence seq(seed);
  for (std::size_t i = 0; i < set.size(); ++i) {
    for (std::int64_t j = 0; j < set.count(i); ++j) {
      const float magnitude = seq.next(0.01f, 1.0f);
      set.set(i, j, (seq.next(0.0f, 1.0f) < 0.5f ? -magnitude : magnitude) * scale);
    }
  }
}

// The tensors as the C API checks them before it makes an Optimizer.
inline std::vector<optim::ParamTensor> checked(const DLTensor* params, const DLTensor* grads, std::size_t n,
                                               const CudaDevices& cuda = device::cuda_devices()) {
  const std::vector<CheckedTensor> checked_params = check_tensor_array(params, n, "params", cuda);
  const std::vector<CheckedTensor> checked_grads = check_tensor_array(grads, n, "grads", cuda);
  return optim::check_param_tensors(checked_params, checked_grads);
}

}  // namespace dtrain::testing
