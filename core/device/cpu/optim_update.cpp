// The host FusedUpdate: the CPU loops over each Slot in turn.
#include <vector>

#include "base/error.hpp"
#include "device/cpu/optim_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

class HostFusedUpdate final : public FusedUpdate {
 public:
  explicit HostFusedUpdate(std::span<const Slot> slots) : slots_(slots.begin(), slots.end()) {}

  double squared_norm() override {
    double total = 0.0;
    for (const Slot& slot : slots_) total += cpu::squared_norm(slot);
    return total;
  }
  void sgd(const SgdStep& step) override {
    for (const Slot& slot : slots_) sgd_update(step, slot);
  }
  void adamw(const AdamwStep& step) override {
    for (const Slot& slot : slots_) adamw_update(step, slot);
  }

 private:
  std::vector<Slot> slots_;
};

}  // namespace

std::unique_ptr<FusedUpdate> make_fused_update(std::span<const Slot> slots) {
  for (const Slot& slot : slots) {
    if (slot.param.memory != Memory::host || slot.grad.memory != Memory::host) {
      raise(DT_ERR_UNSUPPORTED, "optimizer: the host kernels cannot update a Slot in CUDA memory");
    }
  }
  return std::make_unique<HostFusedUpdate>(slots);
}

}  // namespace dtrain::device::cpu
