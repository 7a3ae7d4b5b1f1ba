// The interface every transport implements: one entry, start(), that takes
// an operation as data (collective.hpp). The communicator has already
// checked the arguments (shapes, dtypes, ranks, counts), so a backend only
// moves and reduces data. start() returns the operation's request; the
// backend completes it, with an error naming the rank at fault when a peer
// fails. Adding a collective is one CallKind and its schedule in the
// backends that run it; the others refuse it by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/tensor.hpp"
#include "comm/collective.hpp"
#include "comm/peer_memory.hpp"
#include "comm/reduce_op.hpp"
#include "comm/request.hpp"

namespace dtrain::comm {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const char* name() const = 0;

  // Starts `op` and returns its request. A backend runs the kinds it
  // implements and refuses the others with unsupported(op); a router
  // passes `op` on whole to the backend its tensors belong to.
  virtual RequestPtr start(const Collective& op) = 0;

  // The same, one call per kind: each describes its operation and starts it.
  RequestPtr allreduce(const TensorView& send, const TensorView& recv, ReduceOp op);
  RequestPtr reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op);
  RequestPtr allgather(const TensorView& send, const TensorView& recv);
  RequestPtr broadcast(const TensorView& buf, int root);
  RequestPtr alltoallv(const TensorView& send, std::vector<std::int64_t> send_counts, const TensorView& recv,
                       std::vector<std::int64_t> recv_counts);
  RequestPtr send(const TensorView& buf, int peer, int tag);
  RequestPtr recv(const TensorView& buf, int peer, int tag);
  RequestPtr barrier();
  RequestPtr reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root);
  RequestPtr gather(const TensorView& send, const TensorView& recv, int root);
  RequestPtr scatter(const TensorView& send, const TensorView& recv, int root);
  RequestPtr allgatherv(const TensorView& send, const TensorView& recv, std::vector<std::int64_t> recv_counts);
  RequestPtr reduce_scatterv(const TensorView& send, std::vector<std::int64_t> recv_counts, const TensorView& recv,
                             ReduceOp op);
  // Starts every op of `ops` (checked, at least one) before waiting for any;
  // the request completes once all of them have.
  RequestPtr p2p_group(std::vector<P2pOp> ops);

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
  // Copies straight between the ranks' memories (peer_memory.hpp), where
  // the backend's ranks all run on one host and may; nullptr elsewhere.
  // Host memory only. Lives as long as the backend.
  virtual const PeerMemory* peer_memory() const { return nullptr; }

  // Completes every pending request with DT_ERR_ABORTED and refuses new work.
  // Called from any thread; must not block.
  virtual void abort() = 0;

 protected:
  // What start() does with a kind the backend does not implement:
  // DT_ERR_UNSUPPORTED naming the backend and the operation.
  [[noreturn]] void unsupported(const Collective& op) const;
};

}  // namespace dtrain::comm
