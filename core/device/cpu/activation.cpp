// GELU and SiLU, forward and backward (device/activation_math.hpp).
#include "device/activation_math.hpp"
#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

template <typename E>
void forward(const ActivationArgs& a) {
  const auto* x = static_cast<const typename E::Bits*>(a.x);
  auto* out = static_cast<typename E::Bits*>(a.out);
  for (std::int64_t i = 0; i < a.count; ++i) out[i] = E::store(activate(a.kind, E::load(x[i])));
}

template <typename E>
void backward(const ActivationArgs& a) {
  const auto* x = static_cast<const typename E::Bits*>(a.x);
  const auto* dy = static_cast<const typename E::Bits*>(a.dy);
  auto* out = static_cast<typename E::Bits*>(a.out);
  for (std::int64_t i = 0; i < a.count; ++i) {
    out[i] = E::store(activation_slope(a.kind, E::load(x[i])) * E::load(dy[i]));
  }
}

}  // namespace

void activation_forward(const ActivationArgs& args) {
  with_element(args.dtype, "activation", [&](auto e) { forward<decltype(e)>(args); });
}

void activation_backward(const ActivationArgs& args) {
  with_element(args.dtype, "activation_backward", [&](auto e) { backward<decltype(e)>(args); });
}

}  // namespace dtrain::device::cpu
