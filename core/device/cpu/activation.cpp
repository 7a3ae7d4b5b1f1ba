// GELU and SiLU, forward and backward (device/activation_math.hpp).
#include <type_traits>

#include "device/activation_math.hpp"
#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

// Calls f with the kind as a constant, so that each loop is compiled for one
// activation and vectorizes: a switch inside the loop keeps it scalar.
template <typename F>
void with_kind(Activation kind, F&& f) {
  switch (kind) {
    case Activation::gelu_tanh: return f(std::integral_constant<Activation, Activation::gelu_tanh>{});
    case Activation::gelu_erf: return f(std::integral_constant<Activation, Activation::gelu_erf>{});
    case Activation::silu: return f(std::integral_constant<Activation, Activation::silu>{});
  }
}

template <typename E>
void forward(const ActivationArgs& a) {
  const auto* x = static_cast<const typename E::Bits*>(a.x);
  auto* out = static_cast<typename E::Bits*>(a.out);
  with_kind(a.kind, [&](auto kind) {
    for (std::int64_t i = 0; i < a.count; ++i) out[i] = E::store(activate(kind, E::load(x[i])));
  });
}

template <typename E>
void backward(const ActivationArgs& a) {
  const auto* x = static_cast<const typename E::Bits*>(a.x);
  const auto* dy = static_cast<const typename E::Bits*>(a.dy);
  auto* out = static_cast<typename E::Bits*>(a.out);
  with_kind(a.kind, [&](auto kind) {
    for (std::int64_t i = 0; i < a.count; ++i) {
      out[i] = E::store(activation_slope(kind, E::load(x[i])) * E::load(dy[i]));
    }
  });
}

}  // namespace

void activation_forward(const ActivationArgs& args) {
  with_element(args.dtype, "activation", [&](auto e) { forward<decltype(e)>(args); });
}

void activation_backward(const ActivationArgs& args) {
  with_element(args.dtype, "activation_backward", [&](auto e) { backward<decltype(e)>(args); });
}

}  // namespace dtrain::device::cpu
