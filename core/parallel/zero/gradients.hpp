// The gradients of a Zero and their reduction over the ranks, unit by unit.
//
// Stages 0–1 keep one full gradient buffer per unit for the whole step and
// allreduce it in place. Stages 2–3 keep only this rank's gradient shard of
// each unit: a unit's full buffer is allocated (zeroed) when the unit's
// first gradient is handed out in a micro-step, reduce-scattered into its
// own first shard-sized part, added into the shard, and freed. Either way
// gradients enter the collective divided by the number of ranks and are
// summed, as DDP does, so that the result is their average and 16-bit sums
// stay in range.
//
// A unit is launched once all its gradients are marked and every later
// unit has been (units are launched last first, the order backward makes
// them in), so every rank issues its collectives in the same order: the
// bookkeeping DDP's buckets share (common::GradientSync, a unit per group).
//
// Device memory: the buffers live in the Zero's queue, which runs the
// scaling, additions and collectives on its stream. gradient() orders the
// trainer's stream after the zeroing of the buffer it hands out; a unit's
// reduction waits for what the trainer's stream held when the unit was
// launched (after its last mark); wait() returns with the results in place.
//
// Threads: gradient() and mark_ready() may come from several threads; all
// calls are serialised here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "base/tensor.hpp"
#include "comm/communicator.hpp"
#include "parallel/common/gradient_sync.hpp"
#include "parallel/zero/layout.hpp"
#include "parallel/zero/memory.hpp"

namespace dtrain::parallel::zero {

class GradientReduction {
 public:
  // The communicator, queue and ledger must outlive this object. `stage`
  // 0–3. `trainer_stream`: the stream the trainer writes gradients on
  // (device memory; NULL is the legacy default stream).
  GradientReduction(comm::Communicator& comm, const Layout& layout, DType dtype, int stage, MemoryLedger& ledger,
                    device::Queue& queue, void* trainer_stream);
  // Waits for reductions still in flight (within the communicator's
  // deadline): they write into buffers owned here.
  ~GradientReduction();

  GradientReduction(const GradientReduction&) = delete;
  GradientReduction& operator=(const GradientReduction&) = delete;

  // The buffer parameter `param`'s gradient is added into in this
  // micro-step. DT_ERR_INVALID_USAGE once it is marked in this micro-step.
  TensorView gradient(std::size_t param);
  // DT_ERR_INVALID_USAGE when already marked in this micro-step.
  void mark_ready(std::size_t param);
  // Ends the micro-step: launches what is left and waits until `timeout_ms`
  // from now (negative: the communicator's deadline). Gradients never
  // marked abandon it with DT_ERR_INVALID_USAGE naming them.
  void wait(int timeout_ms);
  // DT_ERR_INVALID_USAGE in the middle of a micro-step.
  void set_sync(bool sync);

  // Throws DT_ERR_INVALID_USAGE, saying why, unless the gradients since the
  // last step are all reduced: no micro-step is open and the last one ended
  // in wait() with sync on.
  void check_complete() const;
  // This rank's (averaged) gradient shard of unit `u`: the optimizer's view.
  TensorView shard(std::size_t u) const;
  // Zeroes the gradients for the next step (queued).
  void zero();

 private:
  struct UnitState {
    TrackedBuffer full;   // stages 0–1: always; stages 2–3: during a micro-step
    TrackedBuffer shard;  // stages 2–3
  };

  bool shards_gradients() const { return stage_ >= 2; }
  // DT_ERR_INVALID_ARGUMENT for an unknown parameter, DT_ERR_INVALID_USAGE
  // for one already marked in this micro-step; the message says the
  // gradient `is_or_was` marked.
  void check_unmarked(std::size_t param, const char* is_or_was) const;
  TrackedBuffer& full_buffer(std::size_t u);
  // Unit `u`'s collective (null for a unit of no elements).
  comm::RequestPtr launch(std::size_t u);
  // Stages 2–3: adds unit `u`'s reduced shard into the gradient shard and frees its buffer.
  void finish(std::size_t u);
  // Stages 2–3: finishes, in launch order, the units whose reduction is done.
  void finish_done();
  void abandon(comm::Clock::time_point deadline) noexcept;
  void end_micro_step();

  comm::Communicator& comm_;
  const Layout& layout_;
  const DType dtype_;
  const int stage_;
  MemoryLedger& ledger_;
  device::Queue& queue_;
  void* const trainer_stream_;

  mutable std::mutex mutex_;
  std::vector<UnitState> units_;
  common::GradientSync reduction_;  // gradients by parameter, a group per unit
  bool sync_ = true;
  bool open_ = false;     // a gradient was handed out or marked in this micro-step
  bool complete_ = true;  // the gradients since the last step are all reduced
};

}  // namespace dtrain::parallel::zero
