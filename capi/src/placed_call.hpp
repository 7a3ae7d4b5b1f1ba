// The tensors of one functional call (tensor parallelism's layers, ...) and
// where its work runs. Every tensor must be where the first one is: host
// memory, or one CUDA device (DT_ERR_INVALID_ARGUMENT otherwise, naming
// both). The work runs on the calling thread's device::Queue there
// (device::thread_queue), which first waits for what the legacy default
// stream holds, so a caller's work queued there before
// the call is seen; finish() returns once the work has run, so the call
// blocks until its results are in place, as on the host.
#pragma once

#include <optional>

#include "base/tensor.hpp"
#include "comm/communicator.hpp"
#include "device/queue.hpp"

namespace dtrain::capi {

class PlacedCall {
 public:
  // `comm` (may be null, for calls that communicate nothing) is checked
  // to reach the tensors' place.
  explicit PlacedCall(comm::Communicator* comm = nullptr) : comm_(comm) {}
  // A call that failed part way leaves no work behind that still uses the
  // caller's tensors: the Queue is waited for here too.
  ~PlacedCall();
  PlacedCall(const PlacedCall&) = delete;
  PlacedCall& operator=(const PlacedCall&) = delete;

  // The checked view of `tensor` (view_of), ordered on the
  // call's Queue.
  TensorView view(const DLTensor* tensor, const char* name);
  // The Queue of the call's place (host memory before any tensor is seen).
  device::Queue& queue();
  // Returns once the work queued so far has run; throws its error.
  void finish();

 private:
  comm::Communicator* comm_;
  std::optional<TensorView> first_;
  const char* first_name_ = nullptr;
  device::Queue* queue_ = nullptr;
};

}  // namespace dtrain::capi
