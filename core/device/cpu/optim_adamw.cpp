#include <cmath>

#include "device/cpu/element.hpp"
#include "device/cpu/optim_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

// One fused pass of torch.optim.AdamW over `count` elements: decoupled
// weight decay (p -= lr * weight_decay * p), the moment updates, and the
// bias-corrected step p -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
template <typename E, bool kMaster, bool kWriteGrad>
void adamw_loop(const AdamwStep& s, typename E::Bits* __restrict param, float* __restrict master,
                typename E::Bits* __restrict grad, float* __restrict m, float* __restrict v,
                std::int64_t count) {
  const float factor = s.grad.factor;
  const float lr_weight_decay = s.lr_weight_decay;
  const float beta1 = s.beta1, one_minus_beta1 = s.one_minus_beta1;
  const float beta2 = s.beta2, one_minus_beta2 = s.one_minus_beta2;
  const float step_size = s.step_size;
  const float inv_sqrt_bias2 = s.inv_sqrt_bias2;
  const float eps = s.eps;
  for (std::int64_t i = 0; i < count; ++i) {
    const float g = E::load(grad[i]) * factor;
    float p = kMaster ? master[i] : E::load(param[i]);
    p = p - lr_weight_decay * p;
    const float mi = beta1 * m[i] + one_minus_beta1 * g;
    const float vi = beta2 * v[i] + one_minus_beta2 * (g * g);
    m[i] = mi;
    v[i] = vi;
    p = p - step_size * (mi / (std::sqrt(vi) * inv_sqrt_bias2 + eps));
    if constexpr (kMaster) master[i] = p;
    param[i] = E::store(p);
    if constexpr (kWriteGrad) grad[i] = E::store(g);
  }
}

template <typename E, bool kMaster>
void adamw_choose_write(const AdamwStep& s, const Slot& slot) {
  auto* param = static_cast<typename E::Bits*>(slot.param.data);
  auto* grad = static_cast<typename E::Bits*>(slot.grad.data);
  if (s.grad.write_back()) {
    adamw_loop<E, kMaster, true>(s, param, slot.master, grad, slot.state[0], slot.state[1], slot.count());
  } else {
    adamw_loop<E, kMaster, false>(s, param, slot.master, grad, slot.state[0], slot.state[1], slot.count());
  }
}

}  // namespace

void adamw_update(const AdamwStep& step, const Slot& slot) {
  if (slot.count() == 0) return;
  with_element(slot.param.dtype, "optimizer", [&](auto element) {
    using E = decltype(element);
    adamw_choose_write<E, !std::is_same_v<E, F32>>(step, slot);
  });
}

}  // namespace dtrain::device::cpu
