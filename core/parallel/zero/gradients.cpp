#include "parallel/zero/gradients.hpp"

#include <string>

#include "base/error.hpp"
#include "comm/deadline.hpp"

namespace dtrain::parallel::zero {

namespace {

std::vector<std::size_t> unit_of_each_parameter(const Layout& layout) {
  std::vector<std::size_t> units(layout.parameter_count());
  for (std::size_t p = 0; p < units.size(); ++p) units[p] = layout.place(p).unit;
  return units;
}

// Last first: the order backward produces them in.
std::vector<std::size_t> units_last_first(const Layout& layout) {
  std::vector<std::size_t> order;
  for (std::size_t u = layout.units().size(); u-- > 0;) order.push_back(u);
  return order;
}

}  // namespace

GradientReduction::GradientReduction(comm::Communicator& comm, const Layout& layout, DType dtype, int stage,
                                     MemoryLedger& ledger, device::Queue& queue, void* trainer_stream)
    : comm_(comm),
      layout_(layout),
      dtype_(dtype),
      stage_(stage),
      ledger_(ledger),
      queue_(queue),
      trainer_stream_(trainer_stream),
      units_(layout.units().size()),
      reduction_(comm, unit_of_each_parameter(layout), units_last_first(layout),
                 [this](std::size_t u) { return launch(u); }, "micro-step") {
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const Unit& unit = layout_.unit(u);
    if (shards_gradients()) {
      const Range shard = layout_.shard(unit);
      units_[u].shard =
          TrackedBuffer(ledger_, queue_, Purpose::gradients, dtype_, shard.count, shard.count - layout_.owned(unit).count);
    } else {
      units_[u].full = TrackedBuffer(ledger_, queue_, Purpose::gradients, dtype_, unit.padded, unit.padding());
    }
  }
}

GradientReduction::~GradientReduction() {
  std::lock_guard<std::mutex> lock(mutex_);
  abandon(comm::deadline_after(comm_, -1));
}

TrackedBuffer& GradientReduction::full_buffer(std::size_t u) {
  TrackedBuffer& full = units_[u].full;
  if (!full.allocated()) {
    const Unit& unit = layout_.unit(u);
    full = TrackedBuffer(ledger_, queue_, Purpose::communication, dtype_, unit.padded, unit.padding());
    // The trainer adds into it after the zeroing. Buffers that live for the
    // whole step are zeroed by the step, which returns once that has run.
    queue_.signal(trainer_stream_);
  }
  return full;
}

void GradientReduction::check_unmarked(std::size_t param, const char* is_or_was) const {
  layout_.check_parameter(param);
  reduction_.check_unmarked(param, is_or_was);
}

TensorView GradientReduction::gradient(std::size_t param) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_unmarked(param, "is");
  const Place& place = layout_.place(param);
  open_ = true;
  // Units whose reduction has finished give their buffers back before
  // another is allocated, so that backward holds as few as it can.
  finish_done();
  return full_buffer(place.unit).view(place.offset, place.count);
}

void GradientReduction::mark_ready(std::size_t param) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_unmarked(param, "was");
  const std::size_t u = layout_.place(param).unit;
  // A gradient marked without being handed out contributes zeros.
  full_buffer(u);
  open_ = true;
  if (reduction_.mark(param)) finish_done();
}

comm::RequestPtr GradientReduction::launch(std::size_t u) {
  const Unit& unit = layout_.unit(u);
  UnitState& state = units_[u];
  if (unit.padded == 0) return nullptr;
  // Every gradient of the unit is marked, so the trainer's stream holds all
  // the work that writes them.
  queue_.wait_for(trainer_stream_);
  if (comm_.size() > 1) queue_.divide(dtype_, state.full.at(0), unit.padded, comm_.size());
  const TensorView full = state.full.view(0, unit.padded);
  if (shards_gradients()) {
    // In place: the result lands in the buffer's first shard-sized part.
    return comm_.reduce_scatter(full, full.slice(0, unit.shard), DT_SUM);
  }
  return comm_.allreduce(full, full, DT_SUM);
}

void GradientReduction::finish(std::size_t u) {
  UnitState& state = units_[u];
  queue_.add(dtype_, state.shard.at(0), state.full.at(0), layout_.unit(u).shard);
  state.full.reset();
}

void GradientReduction::finish_done() {
  if (shards_gradients()) reduction_.take_finished([this](std::size_t u) { finish(u); });
}

void GradientReduction::wait(int timeout_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto deadline = comm::deadline_after(comm_, timeout_ms);

  if (reduction_.marked_count() != reduction_.gradient_count()) {
    // Only a failing micro-step pays for naming the gradients it lacks.
    const std::string message = reduction_.unmarked_message(reduction_.unmarked());
    abandon(deadline);
    raise(DT_ERR_INVALID_USAGE, message + "; the micro-step was abandoned");
  }
  try {
    reduction_.launch_ready();
    reduction_.finish_all(deadline, [this](std::size_t u) {
      if (shards_gradients()) finish(u);
    });
    queue_.synchronize();
  } catch (...) {
    abandon(deadline);
    throw;
  }
  complete_ = sync_;
  end_micro_step();
}

void GradientReduction::abandon(comm::Clock::time_point deadline) noexcept {
  reduction_.abandon(deadline);
  // What stages 2–3 had not added into their shards is dropped with the
  // buffers; stages 0–1 keep it in theirs.
  if (shards_gradients()) {
    for (UnitState& state : units_) state.full.reset();
  }
  complete_ = false;
  end_micro_step();
}

void GradientReduction::end_micro_step() {
  reduction_.reset();
  open_ = false;
}

void GradientReduction::set_sync(bool sync) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_) {
    raise(DT_ERR_INVALID_USAGE, "a micro-step is in progress; set sync before its first gradient or after wait()");
  }
  sync_ = sync;
  // Stages 0–1 with sync off accumulate locally; stages 2–3 keep no full
  // gradient to accumulate in, so they always reduce.
  reduction_.set_launching(sync_ || shards_gradients());
}

void GradientReduction::check_complete() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_) {
    raise(DT_ERR_INVALID_USAGE, "a micro-step is in progress (" + std::to_string(reduction_.marked_count()) +
                                    " gradients marked); end it with wait() before the step");
  }
  if (!complete_) {
    raise(DT_ERR_INVALID_USAGE,
          "the last micro-step was not reduced: it ran with sync off or was abandoned; run a micro-step "
          "with sync on and end it with wait() before the step");
  }
}

TensorView GradientReduction::shard(std::size_t u) const {
  const UnitState& state = units_[u];
  const Range mine = layout_.shard(layout_.unit(u));
  if (shards_gradients()) return state.shard.view(0, mine.count);
  return state.full.view(mine.first, mine.count);
}

void GradientReduction::zero() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (UnitState& state : units_) (shards_gradients() ? state.shard : state.full).fill_zero();
  complete_ = true;
}

}  // namespace dtrain::parallel::zero
