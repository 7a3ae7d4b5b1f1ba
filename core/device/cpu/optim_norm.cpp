#include "device/cpu/element.hpp"
#include "device/cpu/optim_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

// Independent partial sums, one per lane, so that the additions need no
// reassociation and GCC can vectorise them as they are; the result depends
// only on the data, never on the vector width.
constexpr int kLanes = 16;

template <typename E>
double sum_of_squares(const typename E::Bits* __restrict grad, std::int64_t count) {
  double lanes[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double g = E::load(grad[i + j]);
      lanes[j] += g * g;
    }
  }
  for (; i < count; ++i) {
    const double g = E::load(grad[i]);
    lanes[0] += g * g;
  }
  double total = 0.0;
  for (double lane : lanes) total += lane;
  return total;
}

}  // namespace

double squared_norm(const Slot& slot) {
  return with_element(slot.grad.dtype, "optimizer", [&](auto element) {
    using E = decltype(element);
    return sum_of_squares<E>(static_cast<const typename E::Bits*>(slot.grad.data), slot.grad.count);
  });
}

}  // namespace dtrain::device::cpu
