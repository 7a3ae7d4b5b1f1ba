// One bucket: a flat buffer in the wire dtype that holds copies of its
// gradients, and the allreduce that sums it in place. Gradients are copied
// in as they are marked ready (spreading the copies over backward) and
// copied back, scaled, once the allreduce is done. The buffer and the copies
// are the DDP's device Queue's: host memory, or the gradients' CUDA device,
// where the copies are queued on the Queue's stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/tensor.hpp"
#include "comm/communicator.hpp"
#include "device/buffer.hpp"
#include "device/queue.hpp"

namespace dtrain::parallel::ddp {

// The values are the C API's dt_bucket_state.
enum class BucketState {
  waiting = 0,    // some gradients are not in yet; nothing sent
  in_flight = 1,  // the allreduce is running
  reduced = 2,    // the allreduce is done; wait() has not copied the result back yet
  failed = 3,     // the allreduce failed; wait() reports why
};

class Bucket {
 public:
  struct Slot {
    std::size_t gradient;  // index in the DDP's gradient list
    TensorView view;       // the caller's gradient
    std::int64_t offset;   // first element in the bucket
  };

  // A bucket of `gradients` (indices into `views`) in memory of `queue`,
  // which must outlive it.
  Bucket(device::Queue& queue, DType wire, const std::vector<std::size_t>& gradients,
         const std::vector<TensorView>& views);
  Bucket(Bucket&&) = default;

  DType wire() const { return wire_; }
  std::int64_t count() const { return count_; }
  const std::vector<Slot>& slots() const { return slots_; }

  // Copies slot `s`'s gradient in, multiplied by `scale` (queued: the caller
  // has ordered the Queue after the work that writes the gradient). Each
  // slot is filled once per step.
  void fill(std::size_t s, double scale);
  // Zeroes slot `s`: a gradient that was not used contributes nothing.
  void fill_zero(std::size_t s);
  // Every slot is filled.
  bool full() const { return filled_ == slots_.size(); }

  // Starts the in-place sum over ranks. Requires full().
  void launch(comm::Communicator& comm);
  BucketState state() const;

  // Waits for the allreduce until `deadline`, then queues the copies of the
  // sums into the gradients, multiplied by `scale` (the Queue's
  // synchronize() waits for them). Throws the allreduce's error.
  void finish(comm::Communicator& comm, comm::Clock::time_point deadline, double scale);
  // Waits for a launched allreduce however it ends, so that the buffer is
  // free again; used when a step is abandoned.
  void drain(comm::Communicator& comm, comm::Clock::time_point deadline) noexcept;
  // Empty again, for the next step.
  void reset();

 private:
  void* at(std::int64_t offset) const;

  device::Queue* queue_;
  DType wire_;
  std::vector<Slot> slots_;
  std::int64_t count_ = 0;
  device::Buffer storage_;
  std::size_t filled_ = 0;
  bool launched_ = false;
  comm::RequestPtr request_;  // null for a bucket of no elements, which sends nothing
};

}  // namespace dtrain::parallel::ddp
