#include "gelu.hpp"

#include <cstdint>

#include "device/kernels.hpp"

namespace dtbench {

namespace {

dtrain::TensorView f32_view(const float* data, std::size_t count) {
  dtrain::TensorView view;
  view.data = const_cast<float*>(data);
  view.count = static_cast<std::int64_t>(count);
  view.dtype = dtrain::DType::f32;
  return view;
}

}  // namespace

void gelu_forward(const float* h, float* a, std::size_t count) {
  dtrain::device::activation_forward(dtrain::device::Activation::gelu_tanh, f32_view(h, count), f32_view(a, count));
}

void gelu_backward(const float* h, const float* da, float* dh, std::size_t count) {
  dtrain::device::activation_backward(dtrain::device::Activation::gelu_tanh, f32_view(h, count), f32_view(da, count),
                                      f32_view(dh, count));
}

}  // namespace dtbench
