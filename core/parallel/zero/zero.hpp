// ZeRO stages 0–3 (stage 3 is FSDP): a model's parameters, gradients and
// optimizer state, sharded over the ranks of a communicator as far as the
// stage says (see dtrain/zero.h for what each rank keeps and for a training
// step's calls).
//
//   stage 0  full parameters and gradients; allreduce; the optimizer
//            updates every element (each rank the same)
//   stage 1  full parameters and gradients; allreduce; the optimizer updates
//            this rank's shard, which an allgather then spreads
//   stage 2  full parameters; gradients reduce-scattered into this rank's
//            gradient shard unit by unit; as stage 1 otherwise
//   stage 3  only shards; a unit's full parameters are allgathered into a
//            buffer of their own between gather() and release()
//
// The optimizer (core/optim) runs over Slots of this rank's shard of each
// unit, with the squared gradient norm summed over the ranks, so clipping
// and skipping on inf/NaN are decided on the whole model and identically
// everywhere.
//
// Memory: the Zero's buffers live where the parameters given at creation
// do, host memory or their CUDA device (device/queue.hpp), and the
// optimizer runs there too. On a device, work is queued on the Zero's own
// stream, ordered against the trainer's (Options::stream) through events;
// the calls that return results (wait, step, gather_wait) return with them
// in place for work on any stream.
//
// Collectives are issued in program order: gathers (and their prefetches)
// when gather() is called, gradient reductions when mark_ready() completes
// a unit. Ranks that make the same calls in the same order therefore issue
// the same collectives in the same order; the communicator must not run
// other collectives in between.
#pragma once


#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/tensor_list.hpp"
#include "comm/communicator.hpp"
#include "device/queue.hpp"
#include "optim/config.hpp"
#include "optim/optimizer.hpp"
#include "parallel/zero/checkpoint.hpp"
#include "parallel/zero/gather.hpp"
#include "parallel/zero/gradients.hpp"
#include "parallel/zero/layout.hpp"
#include "parallel/zero/memory.hpp"
#include "parallel/zero/options.hpp"

namespace dtrain::parallel::zero {

class Zero {
 public:
  // Collective over `comm`. Checks the parameters (f32, f16 or bf16, all
  // the same, all in host memory or all on the communicator's CUDA device:
  // DT_ERR_UNSUPPORTED for CUDA memory this build, machine or communicator
  // cannot use) and the options,
  // then makes sure every rank registered the same parameters, options and
  // optimizer configuration: DT_ERR_MISMATCH on every rank otherwise. A rank
  // whose own arguments are bad (a refused parse of `params` included)
  // throws DT_ERR_INVALID_ARGUMENT and the others DT_ERR_MISMATCH; no rank is left waiting. The parameters are
  // copied from rank 0 (read here only). `comm` must outlive the Zero.
  Zero(comm::Communicator& comm, const ParsedTensors& params, const optim::Config& config,
       const Options& options);
  ~Zero() = default;

  Zero(const Zero&) = delete;
  Zero& operator=(const Zero&) = delete;

  std::size_t parameter_count() const { return shapes_.size(); }
  std::size_t unit_count() const { return layout_.units().size(); }
  const Layout& layout() const { return layout_; }
  // Parameter `index`'s shape; it lives as long as the Zero.
  const std::vector<std::int64_t>& shape(std::size_t index) const;

  // Parameter `index`'s full values. Stage 3: DT_ERR_INVALID_USAGE unless
  // its unit is gathered and waited for.
  TensorView parameter(std::size_t index) const;
  TensorView gradient(std::size_t index) { return gradients_.gradient(index); }
  void mark_ready(std::size_t index) { gradients_.mark_ready(index); }
  void wait(int timeout_ms) { gradients_.wait(timeout_ms); }
  void set_sync(bool sync) { gradients_.set_sync(sync); }

  // Collective. DT_ERR_INVALID_USAGE, changing nothing, when the gradients
  // are not all reduced (GradientReduction::check_complete) or a stage 3
  // unit is still gathered.
  optim::StepResult step();

  // Stages 0–2 check the unit and return.
  void gather(std::size_t unit);
  void gather_wait(std::size_t unit, int timeout_ms);
  void release(std::size_t unit);
  // Where unit `unit`'s gather is (stage 3; stages 0–2 are always whole).
  GatherState gather_state(std::size_t unit) const;

  void set_lr(float lr) { optimizer_->set_lr(lr); }
  float loss_scale() const { return optimizer_->loss_scale(); }
  MemoryUsage memory_usage() const { return ledger_.usage(); }

  // This rank's weights and optimizer state as a checkpoint sees them: the
  // elements it saves (the ranks' runs partition the model), or every
  // element it holds and loads. The two differ in stage 0 only, where every
  // rank holds everything and saves its N-th of each unit.
  enum class ViewFor { save, load };
  CheckpointView checkpoint_view(ViewFor purpose) const;
  // After a checkpoint was loaded into checkpoint_view(load)'s runs: sets the
  // optimizer's counters, rounds the master weights into the parameters and
  // makes the full parameters whole again (stages 1–2). Collective.
  void restore(const RestoredCounters& counters);

 private:
  struct Accepted;
  Zero(comm::Communicator& comm, const optim::Config& config, const Options& options, Accepted accepted);

  static Accepted accept(comm::Communicator& comm, const ParsedTensors& params, const optim::Config& config,
                         const Options& options);
  // Copies rank 0's parameters (`params`: the caller's, written on the
  // trainer's stream) into this rank's buffers.
  void load_initial_values(const std::vector<TensorView>& params);
  // This rank's shard of every unit's parameters.
  std::vector<TensorView> parameter_shards() const;
  // The parts of this rank's gradient shards that hold the `excluded`
  // parameters' gradients.
  std::vector<TensorView> excluded_gradients(const std::vector<std::size_t>& excluded) const;
  // Stage 0: the elements of `unit` this rank writes into a checkpoint.
  Range saved_by_this_rank(const Unit& unit) const;
  // Stages 1–2: every rank's updated shard into every rank's full parameters.
  void allgather_shards();

  comm::Communicator& comm_;
  const int stage_;
  const DType dtype_;
  const optim::Kind kind_;
  const int state_buffers_;
  std::vector<std::vector<std::int64_t>> shapes_;  // not const: the C API's tensors point into them
  const Layout layout_;
  void* const trainer_stream_;
  // Declared before every buffer, which it must outlive.
  const std::unique_ptr<device::Queue> queue_;
  MemoryLedger ledger_;
  // Stages 0–2: each unit's full parameters. Stage 3: this rank's shard of each.
  std::vector<TrackedBuffer> parameters_;
  GradientReduction gradients_;
  std::unique_ptr<Gatherer> gatherer_;  // stage 3
  std::unique_ptr<optim::Optimizer> optimizer_;
};

}  // namespace dtrain::parallel::zero
