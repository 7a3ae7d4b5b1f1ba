// Test helper: the linear model y = W x + b with loss 0.5 |y - t|^2 that the
// C API's multi-rank tests train, so that each strategy's result can be held
// against one process training on every sample. Inputs and targets are
// functions of the step and the sample's index, the same on every rank.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <dlpack/dlpack.h>

namespace dtrain::testing {

constexpr int kIn = 5;
constexpr int kOut = 3;

// The model's parameters (or their gradients): W [kOut, kIn] and b [kOut],
// f32, with the DLTensors that describe them.
struct LinearTensors {
  std::vector<float> w = std::vector<float>(kOut * kIn);
  std::vector<float> b = std::vector<float>(kOut);
  std::int64_t w_shape[2] = {kOut, kIn};
  std::int64_t b_shape[1] = {kOut};
  DLTensor tensors[2];
  DLTensor* pointers[2];

  LinearTensors() {
    tensors[0] = DLTensor{w.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, w_shape, nullptr, 0};
    tensors[1] = DLTensor{b.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, b_shape, nullptr, 0};
    pointers[0] = &tensors[0];
    pointers[1] = &tensors[1];
  }
  LinearTensors(const LinearTensors&) = delete;
  LinearTensors& operator=(const LinearTensors&) = delete;
  std::vector<float>& values(int i) { return i == 0 ? w : b; }
};

// Each rank's own initial weights, different on every rank.
inline void initialise(LinearTensors& params, int rank) {
  for (std::size_t i = 0; i < params.w.size(); ++i) {
    params.w[i] = static_cast<float>(std::sin(1.3 * static_cast<double>(i) + 0.7 * rank));
  }
  for (std::size_t o = 0; o < params.b.size(); ++o) params.b[o] = static_cast<float>(0.1 * rank - 0.2 * o);
}

// Sample `s` of step `step`: an input and its target.
inline double input(int step, int s, int i) { return std::sin(0.37 * (s + 1) + 0.91 * i + 0.13 * step); }
inline double target(int step, int s, int o) { return std::cos(0.5 * s + o + 0.29 * step); }

// grads += scale * the mean over samples [first, last) of the loss's
// gradient, computed in double.
inline void accumulate(const LinearTensors& params, int step, int first, int last, double scale,
                       LinearTensors& grads) {
  std::vector<double> gw(params.w.size(), 0.0), gb(params.b.size(), 0.0);
  for (int s = first; s < last; ++s) {
    for (int o = 0; o < kOut; ++o) {
      double y = params.b[o];
      for (int i = 0; i < kIn; ++i) y += static_cast<double>(params.w[o * kIn + i]) * input(step, s, i);
      const double e = y - target(step, s, o);
      gb[o] += e;
      for (int i = 0; i < kIn; ++i) gw[o * kIn + i] += e * input(step, s, i);
    }
  }
  const double factor = scale / (last - first);
  for (std::size_t k = 0; k < gw.size(); ++k) grads.w[k] += static_cast<float>(gw[k] * factor);
  for (std::size_t k = 0; k < gb.size(); ++k) grads.b[k] += static_cast<float>(gb[k] * factor);
}

}  // namespace dtrain::testing
