#include "parallel/zero/footprint.hpp"

#include <algorithm>

#include "device/slot.hpp"

namespace dtrain::parallel::zero {

MemoryUsage footprint(const Layout& layout, int stage, DType dtype, int state_buffers) {
  const auto e = static_cast<std::int64_t>(dtype_size(dtype));
  const auto f32 = static_cast<std::int64_t>(sizeof(float));
  const std::int64_t master = device::needs_master(dtype) ? f32 : 0;
  const std::int64_t state = f32 * state_buffers;
  MemoryUsage m;
  std::int64_t staging = 0;
  for (const Unit& unit : layout.units()) {
    const std::int64_t shard = layout.shard(unit).count;
    const std::int64_t shard_padding = shard - layout.owned(unit).count;
    // Stage 0 lays units out over one shard, so its shard is the whole unit.
    const bool whole_parameters = stage < 3;
    const bool whole_gradients = stage < 2;
    m.parameters += e * (whole_parameters ? unit.padded : shard);
    m.gradients += e * (whole_gradients ? unit.padded : shard);
    m.master_weights += master * shard;
    m.optimizer_state += state * shard;
    m.padding += e * (whole_parameters ? unit.padding() : shard_padding) +
                 e * (whole_gradients ? unit.padding() : shard_padding) + (master + state) * shard_padding;
    staging = std::max(staging, e * unit.padded);
  }
  const std::int64_t during_creation = stage == 3 ? m.parameters + m.gradients + staging : 0;
  m.peak = std::max(m.total(), during_creation);
  return m;
}

}  // namespace dtrain::parallel::zero
