#include "parallel/zero/gather.hpp"

#include <string>

#include "base/error.hpp"
#include "comm/deadline.hpp"

namespace dtrain::parallel::zero {

Gatherer::Gatherer(comm::Communicator& comm, const Layout& layout, std::vector<TensorView> shards, MemoryLedger& ledger,
                   device::Queue& queue, void* trainer_stream, bool prefetch)
    : comm_(comm),
      layout_(layout),
      shards_(std::move(shards)),
      ledger_(ledger),
      queue_(queue),
      trainer_stream_(trainer_stream),
      prefetch_(prefetch),
      units_(layout.units().size()) {}

Gatherer::~Gatherer() {
  const auto deadline = comm::deadline_after(comm_, -1);
  for (UnitState& unit : units_) {
    if (!unit.request) continue;
    try {
      comm::wait_until(comm_, unit.request, deadline);
    } catch (...) {
      // Nothing is left to report to: the Zero is going away.
    }
  }
}

void Gatherer::start(std::size_t unit) {
  UnitState& state = units_[unit];
  if (state.state != GatherState::released) return;
  const Unit& layout = layout_.unit(unit);
  // The allgather writes every element, padding included.
  TrackedBuffer full(ledger_, queue_, Purpose::parameters, shards_[unit].dtype, layout.padded, layout.padding(),
                     TrackedBuffer::Initial::unset);
  if (layout.padded > 0) {
    const TensorView send = queue_.view(shards_[unit].data, layout.shard, shards_[unit].dtype);
    state.request = comm_.allgather(send, full.view(0, layout.padded));
  }
  state.full = std::move(full);
  state.state = GatherState::in_flight;
}

void Gatherer::gather(std::size_t unit) {
  layout_.check_unit(unit);
  if (last_) ascending_ = unit == *last_ ? !ascending_ : unit > *last_;
  last_ = unit;
  start(unit);
  if (!prefetch_) return;
  if (ascending_ && unit + 1 < units_.size()) start(unit + 1);
  if (!ascending_ && unit > 0) start(unit - 1);
}

void Gatherer::wait(std::size_t unit, int timeout_ms) {
  layout_.check_unit(unit);
  if (units_[unit].state == GatherState::released) gather(unit);
  UnitState& state = units_[unit];
  if (state.state == GatherState::whole) return;
  try {
    if (state.request) comm::wait_until(comm_, state.request, comm::deadline_after(comm_, timeout_ms));
  } catch (...) {
    // The communicator is broken now, so the allgather has ended too.
    state = UnitState{};
    throw;
  }
  state.request.reset();
  state.state = GatherState::whole;
}

void Gatherer::release(std::size_t unit) {
  layout_.check_unit(unit);
  UnitState& state = units_[unit];
  if (state.state == GatherState::released) {
    raise(DT_ERR_INVALID_USAGE, "unit " + std::to_string(unit) + " is not gathered");
  }
  if (state.request) {
    try {
      comm::wait_until(comm_, state.request, comm::deadline_after(comm_, -1));
    } catch (...) {
      // Released either way; a broken communicator reports itself on the next call.
    }
  }
  // The trainer's reads of the unit, queued before this call, come first.
  queue_.wait_for(trainer_stream_);
  state = UnitState{};
}

const TrackedBuffer& Gatherer::whole(std::size_t unit) const {
  const UnitState& state = units_[unit];
  if (state.state != GatherState::whole) {
    raise(DT_ERR_INVALID_USAGE,
          "unit " + std::to_string(unit) +
              (state.state == GatherState::released ? " is not gathered; call gather first"
                                                    : " is still being gathered; call gather_wait first"));
  }
  return state.full;
}

std::size_t Gatherer::first_gathered() const {
  for (std::size_t u = 0; u < units_.size(); ++u) {
    if (units_[u].state != GatherState::released) return u;
  }
  return units_.size();
}

}  // namespace dtrain::parallel::zero
