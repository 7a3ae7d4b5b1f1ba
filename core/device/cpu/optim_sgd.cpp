#include "device/cpu/element.hpp"
#include "device/cpu/optim_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

enum class Momentum { none, heavy_ball, nesterov };

// One pass of torch.optim.SGD over `count` elements: g is the scaled
// gradient, plus weight_decay * p; with momentum the buffer becomes
// keep * buffer + take * g and the step follows the buffer (Nesterov: g plus
// momentum times the buffer). Each choice is a template parameter so that the
// loop body has no branches. The parameter is read from `master` when there
// is one, and stored rounded to its own dtype.
template <typename E, bool kMaster, Momentum kMomentum, bool kWriteGrad>
void sgd_loop(const SgdStep& s, typename E::Bits* __restrict param, float* __restrict master,
              typename E::Bits* __restrict grad, float* __restrict buffer, std::int64_t count) {
  const float factor = s.grad.factor;
  const float lr = s.lr;
  const float weight_decay = s.weight_decay;
  const float keep = s.keep;
  const float take = s.take;
  const float momentum = s.momentum_factor;
  for (std::int64_t i = 0; i < count; ++i) {
    const float g = E::load(grad[i]) * factor;
    float p = kMaster ? master[i] : E::load(param[i]);
    float d = g + weight_decay * p;
    if constexpr (kMomentum != Momentum::none) {
      const float b = keep * buffer[i] + take * d;
      buffer[i] = b;
      d = kMomentum == Momentum::nesterov ? d + momentum * b : b;
    }
    p = p - lr * d;
    if constexpr (kMaster) master[i] = p;
    param[i] = E::store(p);
    if constexpr (kWriteGrad) grad[i] = E::store(g);
  }
}

template <typename E, bool kMaster, Momentum kMomentum>
void sgd_choose_write(const SgdStep& s, const Slot& slot) {
  auto* param = static_cast<typename E::Bits*>(slot.param.data);
  auto* grad = static_cast<typename E::Bits*>(slot.grad.data);
  if (s.grad.write_back()) {
    sgd_loop<E, kMaster, kMomentum, true>(s, param, slot.master, grad, slot.state[0], slot.count());
  } else {
    sgd_loop<E, kMaster, kMomentum, false>(s, param, slot.master, grad, slot.state[0], slot.count());
  }
}

template <typename E, bool kMaster>
void sgd_choose_momentum(const SgdStep& s, const Slot& slot) {
  if (!s.momentum) return sgd_choose_write<E, kMaster, Momentum::none>(s, slot);
  if (s.nesterov) return sgd_choose_write<E, kMaster, Momentum::nesterov>(s, slot);
  sgd_choose_write<E, kMaster, Momentum::heavy_ball>(s, slot);
}

}  // namespace

void sgd_update(const SgdStep& step, const Slot& slot) {
  if (slot.count() == 0) return;
  with_element(slot.param.dtype, "optimizer", [&](auto element) {
    using E = decltype(element);
    if constexpr (std::is_same_v<E, F32>) {
      sgd_choose_momentum<E, false>(step, slot);
    } else {
      sgd_choose_momentum<E, true>(step, slot);
    }
  });
}

}  // namespace dtrain::device::cpu
