#include "optim/kernels.hpp"

#include "base/error.hpp"
#include "optim/cpu/kernels.hpp"

namespace dtrain::optim {

namespace {

// The CPU loops would dereference device pointers.
void require_host(std::span<const Slot> slots) {
  for (const Slot& slot : slots) {
    if (slot.param.memory != Memory::host || slot.grad.memory != Memory::host) {
      raise(DT_ERR_UNSUPPORTED, "optimizer: the host kernels cannot update a Slot in CUDA memory "
                                "(the Optimizer's device kernels do)");
    }
  }
}

}  // namespace

double squared_norm(std::span<const Slot> slots) {
  require_host(slots);
  double total = 0.0;
  for (const Slot& slot : slots) total += cpu::squared_norm(slot);
  return total;
}

void sgd_update(const SgdStep& step, std::span<const Slot> slots) {
  require_host(slots);
  for (const Slot& slot : slots) cpu::sgd_update(step, slot);
}

void adamw_update(const AdamwStep& step, std::span<const Slot> slots) {
  require_host(slots);
  for (const Slot& slot : slots) cpu::adamw_update(step, slot);
}

void zero_grads(std::span<const Slot> slots) {
  require_host(slots);
  for (const Slot& slot : slots) cpu::zero_grad(slot);
}

void load_masters(std::span<const Slot> slots) {
  require_host(slots);
  for (const Slot& slot : slots) {
    if (slot.master) cpu::load_master(slot);
  }
}

}  // namespace dtrain::optim
