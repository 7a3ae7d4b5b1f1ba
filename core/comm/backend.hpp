// The interface every transport implements. The communicator has already
// checked the arguments (shapes, dtypes, ranks, counts), so a backend only
// moves and reduces data. Each call starts the operation and returns its
// request; the backend completes it, with an error naming the rank at fault
// when a peer fails.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/tensor.hpp"
#include "comm/reduce_op.hpp"
#include "comm/request.hpp"

namespace dtrain::comm {

// One send or receive of a point-to-point group (dt_p2p_group).
struct P2pOp {
  bool is_send = false;
  TensorView buf;
  int peer = 0;
  int tag = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const char* name() const = 0;

  virtual RequestPtr allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) = 0;
  virtual RequestPtr reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) = 0;
  virtual RequestPtr allgather(const TensorView& send, const TensorView& recv) = 0;
  virtual RequestPtr broadcast(const TensorView& buf, int root) = 0;
  virtual RequestPtr alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                               const TensorView& recv, const std::vector<std::int64_t>& recv_counts) = 0;
  virtual RequestPtr send(const TensorView& buf, int peer, int tag) = 0;
  virtual RequestPtr recv(const TensorView& buf, int peer, int tag) = 0;
  virtual RequestPtr barrier() = 0;

  // The collectives and groups below came after the first backends: each
  // backend overrides those it implements, and the rest refuse with
  // DT_ERR_UNSUPPORTED naming the backend and the operation. Views a rank
  // does not use (recv of a reduce or gather off the root, send of a
  // scatter off the root) arrive empty: no data, no elements, and the
  // dtype and placement of the tensor the rank does use.
  virtual RequestPtr reduce(const TensorView& /*send*/, const TensorView& /*recv*/, ReduceOp, int /*root*/) {
    unsupported("reduce");
  }
  virtual RequestPtr gather(const TensorView& /*send*/, const TensorView& /*recv*/, int /*root*/) {
    unsupported("gather");
  }
  virtual RequestPtr scatter(const TensorView& /*send*/, const TensorView& /*recv*/, int /*root*/) {
    unsupported("scatter");
  }
  virtual RequestPtr allgatherv(const TensorView& /*send*/, const TensorView& /*recv*/,
                                const std::vector<std::int64_t>& /*recv_counts*/) {
    unsupported("allgatherv");
  }
  virtual RequestPtr reduce_scatterv(const TensorView& /*send*/, const std::vector<std::int64_t>& /*recv_counts*/,
                                     const TensorView& /*recv*/, ReduceOp) {
    unsupported("reduce_scatterv");
  }
  // Starts every op of `ops` (checked, at least one) before waiting for any;
  // the request completes once all of them have.
  virtual RequestPtr p2p_group(const std::vector<P2pOp>& /*ops*/) { unsupported("p2p_group"); }

  // A backend for the ranks of this one that share `color`, ordered by key
  // then rank; nullptr when color is DT_UNDEF. Collective over this backend.
  virtual std::unique_ptr<Backend> split(int color, int key, int* new_rank, int* new_size) = 0;

  // Waits for `request` until `deadline` and returns whether it finished. A
  // backend may drive its own progress on the calling thread meanwhile, so
  // that a small blocking operation pays no hand-off to a progress thread.
  virtual bool wait(const RequestPtr& request, Clock::time_point deadline) {
    return request->wait_until(deadline);
  }

  // Throws what an operation would for `view`'s memory (named `name` in the
  // message): a CUDA device this backend does not use, say. For callers
  // that check memory they will communicate later, while a refusal can
  // still be reported to every rank. A backend of host memory alone accepts
  // everything: without CUDA support, check_tensor refuses CUDA tensors.
  virtual void check_placement(const TensorView& /*view*/, const char* /*name*/) const {}

  // Whether the calling thread will wait at once for the next operation it
  // starts (a blocking call; turned off again once it has started). A
  // backend may then spare the hand-off to a background thread, or run a
  // small operation to completion then and there.
  virtual void expect_wait(bool) {}

  // The ranks `request` is still waiting for ("rank 2, rank 5"), for timeout
  // messages; empty when the backend cannot tell.
  virtual std::string unresponsive_ranks(const Request&) { return {}; }

  // Completes every pending request with DT_ERR_ABORTED and refuses new work.
  // Called from any thread; must not block.
  virtual void abort() = 0;

 private:
  [[noreturn]] void unsupported(const char* operation) const {
    raise(DT_ERR_UNSUPPORTED, std::string("the ") + name() + " backend does not implement " + operation);
  }
};

}  // namespace dtrain::comm
