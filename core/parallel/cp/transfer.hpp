// One shift around the ring: a float buffer sent to the next rank while
// another fills from the previous one, started at once and waited for
// later, so that the attention of the current block runs meanwhile.
//
// Both messages go as one point-to-point group, and every rank starts the
// same shifts in the same order: so the ring holds over NCCL too, where a
// lone send holds its stream until the receive is posted and messages
// match in order, tags ignored. On a CUDA device the
// messages travel on a stream of their own (`transfers`), after the work
// queued on the compute queue before the shift, and compute queued after
// wait() sees what arrived; on the host both queues are the same.
#pragma once

#include <cstdint>

#include "comm/communicator.hpp"
#include "device/queue.hpp"

namespace dtrain::parallel::cp {

class Shift {
 public:
  // Starts sending `count` floats at `send` to the next rank and receiving
  // as many into `receive` from the previous one (tag `tag`). Both buffers,
  // in the queues' memory, must outlive the shift.
  Shift(comm::Communicator& comm, device::Queue& compute, device::Queue& transfers, const float* send,
        float* receive, std::int64_t count, int tag);
  // A shift left before it was waited for (an exception unwinding the
  // ring) aborts the communicator, so that the transport stops touching
  // buffers about to be freed, and settles.
  ~Shift();

  Shift(const Shift&) = delete;
  Shift& operator=(const Shift&) = delete;

  // Waits within the communicator's deadline (throws its error, after
  // settling); work queued on `compute` from now on runs after the messages.
  void wait();

 private:
  // After a failure: the compute queue, on which the ring's buffers are
  // released, waits for what the transfer stream still holds, so that no
  // buffer is freed under a message (best effort: a device error is
  // swallowed, the call already failing).
  void settle() noexcept;

  comm::Communicator& comm_;
  device::Queue& compute_;
  device::Queue& transfers_;
  comm::RequestPtr request_;
};

}  // namespace dtrain::parallel::cp
