#include "parallel/zero/gradients.hpp"

#include <string>

#include "base/error.hpp"
#include "base/flat_tensor.hpp"
#include "base/index_list.hpp"
#include "comm/deadline.hpp"

namespace dtrain::parallel::zero {

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
      marked_(layout.parameter_count(), false),
      next_launch_(units_.size()),
      next_finish_(units_.size()) {
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
  if (marked_[param]) {
    raise(DT_ERR_INVALID_USAGE, "gradient " + std::to_string(param) + " " + is_or_was +
                                    " already marked ready in this micro-step; wait() ends the micro-step");
  }
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
  marked_[param] = true;
  ++marked_count_;
  open_ = true;
  if (++units_[u].marked == layout_.unit(u).params) {
    launch_ready();
    finish_done();
  }
}

void GradientReduction::launch_ready() {
  // Stages 0–1 with sync off accumulate locally; stages 2–3 keep no full
  // gradient to accumulate in, so they always reduce.
  if (!sync_ && !shards_gradients()) return;
  while (next_launch_ > 0 && units_[next_launch_ - 1].marked == layout_.unit(next_launch_ - 1).params) {
    launch(--next_launch_);
  }
}

void GradientReduction::launch(std::size_t u) {
  const Unit& unit = layout_.unit(u);
  UnitState& state = units_[u];
  if (unit.padded == 0) return;
  // Every gradient of the unit is marked, so the trainer's stream holds all
  // the work that writes them.
  queue_.wait_for(trainer_stream_);
  if (comm_.size() > 1) queue_.divide(dtype_, state.full.at(0), unit.padded, comm_.size());
  const DLDevice device = queue_.dlpack_device();
  FlatTensor full(state.full.at(0), unit.padded, dtype_, device);
  if (shards_gradients()) {
    // In place: the result lands in the buffer's first shard-sized part.
    FlatTensor reduced(state.full.at(0), unit.shard, dtype_, device);
    state.request = comm_.reduce_scatter(full.get(), reduced.get(), DT_SUM, queue_.stream());
  } else {
    state.request = comm_.allreduce(full.get(), full.get(), DT_SUM, queue_.stream());
  }
}

void GradientReduction::finish(std::size_t u) {
  UnitState& state = units_[u];
  queue_.add(dtype_, state.shard.at(0), state.full.at(0), layout_.unit(u).shard);
  state.full.reset();
}

void GradientReduction::finish_done() {
  if (!shards_gradients()) return;
  while (next_finish_ > next_launch_) {
    const UnitState& state = units_[next_finish_ - 1];
    if (state.request && (!state.request->done() || state.request->status() != DT_OK)) return;
    finish(--next_finish_);
  }
}

void GradientReduction::wait(int timeout_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto deadline = comm::deadline_after(comm_, timeout_ms);

  if (marked_count_ != marked_.size()) {
    // Only a failing micro-step pays for naming the gradients it lacks.
    std::vector<std::size_t> unmarked;
    for (std::size_t i = 0; i < marked_.size(); ++i) {
      if (!marked_[i]) unmarked.push_back(i);
    }
    abandon(deadline);
    raise(DT_ERR_INVALID_USAGE, "rank " + std::to_string(comm_.rank()) + ": gradient" +
                                    (unmarked.size() == 1 ? " " : "s ") + list_indices(unmarked) +
                                    (unmarked.size() == 1 ? " was" : " were") +
                                    " never marked ready in this micro-step; the micro-step was abandoned");
  }
  try {
    launch_ready();
    for (std::size_t u = units_.size(); u-- > next_launch_;) {
      if (units_[u].request) comm::wait_until(comm_, units_[u].request, deadline);
    }
    finish_done();
    queue_.synchronize();
  } catch (...) {
    abandon(deadline);
    throw;
  }
  complete_ = sync_;
  end_micro_step();
}

void GradientReduction::abandon(comm::Clock::time_point deadline) noexcept {
  for (UnitState& state : units_) {
    if (!state.request) continue;
    try {
      comm::wait_until(comm_, state.request, deadline);
    } catch (...) {
      // Reported, if at all, by the caller's own error.
    }
  }
  // What stages 2–3 had not added into their shards is dropped with the
  // buffers; stages 0–1 keep it in theirs.
  if (shards_gradients()) {
    for (UnitState& state : units_) state.full.reset();
  }
  complete_ = false;
  end_micro_step();
}

void GradientReduction::end_micro_step() {
  for (UnitState& state : units_) {
    state.marked = 0;
    state.request.reset();
  }
  marked_.assign(marked_.size(), false);
  marked_count_ = 0;
  open_ = false;
  next_launch_ = units_.size();
  next_finish_ = units_.size();
}

void GradientReduction::set_sync(bool sync) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_) {
    raise(DT_ERR_INVALID_USAGE, "a micro-step is in progress; set sync before its first gradient or after wait()");
  }
  sync_ = sync;
}

void GradientReduction::check_complete() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (open_) {
    raise(DT_ERR_INVALID_USAGE, "a micro-step is in progress (" + std::to_string(marked_count_) +
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
