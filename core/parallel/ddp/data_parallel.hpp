// Data-parallel training: every rank holds a full replica of the model,
// computes gradients on its share of the batch, and the gradients are
// averaged over ranks before the optimizer step.
//
// A step: the trainer's backward hook calls mark_ready(i) as each gradient is
// final, in any order. Gradients are copied into buckets (see
// bucket_plan.hpp); a bucket's allreduce starts as soon as all its gradients
// are in and every earlier bucket has started (collectives must be issued in
// the same order on every rank), so communication overlaps the rest of
// backward. wait() starts what is left, waits, and writes the averages back
// into the gradients.
//
// Gradient accumulation: with sync off (set_sync(false), PyTorch's no_sync)
// marking does nothing and wait() returns at once, so gradients accumulate
// locally in the trainer's buffers until the next step with sync on.
//
// Averaging divides by the number of ranks, or, with Options::weighted, by
// the sum of the ranks' set_local_weight() values after each rank's gradient
// was multiplied by its weight: with each rank's mean gradient over its own
// samples and its sample count as weight, the result is the mean over all
// samples even when ranks hold batches of different sizes. Gradients enter
// the buckets pre-divided by the number of ranks (times their weight) and are
// summed, so that 16-bit sums stay in range.
//
// Gradients live in host memory or all on one CUDA device; the buckets are
// where they are, in the memory of a device::Queue of the DDP's own. On CUDA
// the trainer produces gradients on its stream and uses the averages there
// (the `stream` given at creation; NULL: the legacy default stream).
// mark_ready() orders the Queue after what the trainer's stream has queued
// so far, so a gradient is read only once backward has written it, without
// blocking the caller; the allreduces run on the Queue's stream; wait()
// blocks until the averages are written back, so that they are in place for
// any stream when it returns.
//
// Threads: calls are serialised internally; mark_ready may come from the
// backward engine's threads. The communicator must outlive the DDP and must
// not run other collectives while a step is in flight (they would interleave
// with the buckets' allreduces differently on different ranks).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "base/tensor_list.hpp"
#include "comm/communicator.hpp"
#include "device/queue.hpp"
#include "parallel/common/gradient_sync.hpp"
#include "parallel/ddp/bucket.hpp"
#include "parallel/ddp/options.hpp"

namespace dtrain::parallel::ddp {

class DataParallel {
 public:
  // Collective over `comm`. Checks the gradients (floating dtypes, all in
  // host memory or all on one CUDA device, no overlaps) and the options,
  // then makes sure every rank
  // registered the same layout and options: DT_ERR_MISMATCH on every rank
  // otherwise, naming the first gradient or option that differs and the
  // rank. A rank whose own arguments are bad (a refused parse of
  // `gradients` included) throws DT_ERR_INVALID_ARGUMENT and the others
  // DT_ERR_MISMATCH; no rank is left waiting. The gradients' memory is used
  // until the DDP is destroyed and must stay where it is. `stream` is the trainer's
  // cudaStream_t for CUDA gradients (NULL: the legacy default stream), local
  // to each rank; host gradients ignore it. CUDA gradients that compression
  // would have the device narrow in a way it cannot (float64 to 16 bits)
  // throw DT_ERR_UNSUPPORTED naming the first.
  DataParallel(comm::Communicator& comm, const ParsedTensors& gradients, const Options& options,
               void* stream = nullptr);
  // Waits for allreduces still in flight (within the communicator's
  // deadline), since they write into buffers owned here.
  ~DataParallel();

  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // Gradient `index` is final for this step. DT_ERR_INVALID_ARGUMENT for an
  // index out of range; DT_ERR_INVALID_USAGE for one already marked in this
  // step. Does nothing with sync off.
  void mark_ready(std::size_t index);

  // Turns averaging on or off for the steps that follow. DT_ERR_INVALID_USAGE
  // while a step has marked gradients that wait() has not finished.
  void set_sync(bool sync);
  bool sync() const;

  // This rank's weight in the average (Options::weighted), used from the next
  // step on; 1 until set. Finite and >= 0 (DT_ERR_INVALID_ARGUMENT);
  // DT_ERR_INVALID_USAGE without Options::weighted or in the middle of a step.
  void set_local_weight(double weight);

  // Finishes the step: starts the buckets not started yet, waits for all of
  // them (until `timeout_ms` from now; negative: the communicator's
  // deadline) and leaves the averaged gradients in place (on a CUDA device:
  // written, for work on any stream). With sync off,
  // returns at once. Gradients never marked in this step fail the step with
  // DT_ERR_INVALID_USAGE naming them (the step is abandoned and every
  // gradient left as it was), or with Options::find_unused count as zero
  // from this rank and receive the average like the others. Weights that
  // add up to zero fail with DT_ERR_INVALID_USAGE. After a communication
  // error (the communicator is then broken) some gradients may already hold
  // their averages. Either way the next step starts afresh.
  void wait(int timeout_ms = -1);

  std::size_t gradient_count() const { return gradients_.size(); }
  std::size_t bucket_count() const { return buckets_.size(); }
  // The bucket that holds gradient `index` (DT_ERR_INVALID_ARGUMENT when out of range).
  std::size_t bucket_of(std::size_t index) const;
  // Where bucket `bucket` is in this step (DT_ERR_INVALID_ARGUMENT when out of range).
  BucketState bucket_state(std::size_t bucket) const;

  comm::Communicator& communicator() const { return comm_; }
  const Options& options() const { return options_; }

 private:
  // The bucket's allreduce, after the weights' sum before the first bucket's
  // (so that the collectives line up across ranks).
  comm::RequestPtr launch(std::size_t bucket);
  void launch_weight();
  // Waits for what is in flight, ignoring how it ends, and starts afresh.
  void abandon_step(comm::Clock::time_point deadline) noexcept;
  void reset_step();
  void check_index(std::size_t index, const char* what) const;
  // DT_ERR_UNSUPPORTED for a gradient the Queue cannot convert to its wire dtype.
  void check_conversions() const;

  comm::Communicator& comm_;
  const Options options_;
  void* const trainer_stream_;
  std::vector<TensorView> gradients_;
  std::unique_ptr<device::Queue> queue_;  // before buckets_: their memory is its
  std::vector<Bucket> buckets_;
  // Gradient i is slot where_[i].second of bucket where_[i].first.
  std::vector<std::pair<std::size_t, std::size_t>> where_;

  mutable std::mutex mutex_;
  std::optional<common::GradientSync> reduction_;  // the buckets, launched first to last
  bool sync_ = true;
  double local_weight_ = 1.0;
  double weight_sum_ = 0.0;  // this rank's weight, then the sum over ranks
  comm::RequestPtr weight_request_;
};

}  // namespace dtrain::parallel::ddp
