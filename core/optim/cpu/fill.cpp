#include <cstring>

#include "optim/cpu/element.hpp"
#include "optim/cpu/kernels.hpp"

namespace dtrain::optim::cpu {

namespace {

template <typename E>
void widen(const typename E::type* __restrict param, float* __restrict master, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) master[i] = E::load(param[i]);
}

}  // namespace

void zero_grad(const Slot& slot) {
  // All-zero bits are +0.0 in every floating dtype.
  if (slot.grad.count > 0) std::memset(slot.grad.data, 0, slot.grad.bytes());
}

void load_master(const Slot& slot) {
  if (slot.count() == 0) return;
  with_element(slot.param.dtype, [&](auto element) {
    using E = decltype(element);
    widen<E>(static_cast<const typename E::type*>(slot.param.data), slot.master, slot.count());
  });
}

}  // namespace dtrain::optim::cpu
