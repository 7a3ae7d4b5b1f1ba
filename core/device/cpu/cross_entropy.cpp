// The vocabulary-parallel cross-entropy's row statistics and gradient
// (device/kernel_args.hpp), a row at a time, exponentials and sums in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

std::int64_t target_at(const LogitSlice& s, std::int64_t r) {
  return s.target_dtype == DType::i32 ? static_cast<const std::int32_t*>(s.targets)[r]
                                      : static_cast<const std::int64_t*>(s.targets)[r];
}

}  // namespace

void cross_entropy_statistics(const CrossEntropyStatsArgs& a) {
  const LogitSlice& s = a.logits;
  const std::int64_t cols = s.shape.cols;
  for (std::int64_t r = 0; r < s.shape.rows; ++r) {
    const float* z = s.z + r * cols;
    float max = -std::numeric_limits<float>::infinity();
    for (std::int64_t j = 0; j < cols; ++j) max = std::max(max, z[j]);
    double exps = 0.0, total = 0.0;
    for (std::int64_t j = 0; j < cols; ++j) {
      exps += std::exp(static_cast<double>(z[j]) - max);
      total += z[j];
    }
    const std::int64_t column = target_at(s, r) - s.first;
    a.max[r] = max;
    a.sum_exp[r] = static_cast<float>(exps);
    a.target[r] = column >= 0 && column < cols ? z[column] : 0.0f;
    a.sum[r] = static_cast<float>(total);
  }
}

void cross_entropy_gradient(const CrossEntropyGradArgs& a) {
  const LogitSlice& slice = a.logits;
  const std::int64_t cols = slice.shape.cols;
  const double s = a.smoothing;
  for (std::int64_t r = 0; r < slice.shape.rows; ++r) {
    const float* z = slice.z + r * cols;
    float* dz = a.dz + r * cols;
    const std::int64_t target = target_at(slice, r);
    if (target == a.ignore_index) {
      std::fill(dz, dz + cols, 0.0f);
      continue;
    }
    const double scale = a.scale[r];
    const std::int64_t column = target - slice.first;
    for (std::int64_t j = 0; j < cols; ++j) {
      double g = std::exp(static_cast<double>(z[j]) - a.lse[r]) - s / static_cast<double>(a.vocab);
      if (j == column) g -= 1.0 - s;
      dz[j] = static_cast<float>(scale * g);
    }
  }
}

}  // namespace dtrain::device::cpu
