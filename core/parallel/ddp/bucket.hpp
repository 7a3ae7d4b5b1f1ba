// One bucket: a flat buffer in the wire dtype that holds copies of its
// gradients, and the allreduce that sums it in place. Gradients are copied
// in as they are marked ready (spreading the copies over backward) and
// copied back, scaled, once the allreduce is done. The buffer and the copies
// are the DDP's device Queue's: host memory, or the gradients' CUDA device,
// where the copies are queued on the Queue's stream. When the allreduce
// starts and ends is the DDP's GradientSync's to say.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/tensor.hpp"
#include "comm/communicator.hpp"
#include "device/buffer.hpp"
#include "device/queue.hpp"
#include "parallel/common/gradient_sync.hpp"

namespace dtrain::parallel::ddp {

using BucketState = common::GroupState;

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
  // has ordered the Queue after the work that writes the gradient).
  void fill(std::size_t s, double scale);
  // Zeroes slot `s`: a gradient that was not used contributes nothing.
  void fill_zero(std::size_t s);
  // Starts the in-place sum over ranks once every slot is filled; null for
  // a bucket of no elements, which sends nothing.
  comm::RequestPtr launch(comm::Communicator& comm);
  // Queues the copies of the sums into the gradients, multiplied by `scale`
  // (the Queue's synchronize() waits for them), once the allreduce is done.
  void unpack(double scale);

 private:
  void* at(std::int64_t offset) const;

  device::Queue* queue_;
  DType wire_;
  std::vector<Slot> slots_;
  std::int64_t count_ = 0;
  device::Buffer storage_;
};

}  // namespace dtrain::parallel::ddp
