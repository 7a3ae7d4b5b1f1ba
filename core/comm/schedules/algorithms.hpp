// The schedules of every operation over messages (messages.hpp), each an
// Operation that a backend's engine runs over its transport. The
// communicator has checked the arguments; a schedule trusts them. A
// transport with a faster path for some operation (the UCX backend's shared
// memory, say) keeps it beside its transport, not here.
//
//   ring (ring.cpp)             allreduce, reduce-scatter and allgather for
//                               large messages: chunked lanes so sends,
//                               receives and reductions overlap
//   recursive (recursive.cpp)   recursive-doubling allreduce (and
//                               reduce-scatter through it) and
//                               halving-doubling allreduce for mid sizes,
//                               with the usual fix-up for non-powers of two
//                               (fold.hpp); Bruck allgather
//   broadcast.cpp               binomial tree (small), pipelined chain (large)
//   alltoallv.cpp               pairwise exchange, a window of peers at a time
//   barrier.cpp                 dissemination barrier; the start-up handshake
//   p2p.cpp                     tagged send and receive
//   p2p_group.cpp               sends and receives posted together
//   direct.cpp                  gather, scatter, allgatherv, reduce and
//                               reduce_scatterv, straight between the ranks
//                               concerned, after the ranks' promises agree
//                               (agreed_operation.hpp)
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/tensor.hpp"
#include "comm/backend.hpp"
#include "comm/collective.hpp"
#include "comm/exchange_plan.hpp"
#include "comm/reduce_op.hpp"
#include "comm/schedules/operation.hpp"

namespace dtrain::comm::schedule {

// `bytes` bytes at `data`, for internal exchanges.
inline TensorView bytes_view(void* data, std::size_t bytes) {
  TensorView view;
  view.data = data;
  view.count = static_cast<std::int64_t>(bytes);
  view.dtype = DType::u8;
  return view;
}

std::unique_ptr<Operation> ring_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op);
std::unique_ptr<Operation> ring_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op);
std::unique_ptr<Operation> ring_allgather(const TensorView& send, const TensorView& recv);

std::unique_ptr<Operation> recursive_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op);
std::unique_ptr<Operation> halving_doubling_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op);
std::unique_ptr<Operation> recursive_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op);
std::unique_ptr<Operation> bruck_allgather(const TensorView& send, const TensorView& recv);

std::unique_ptr<Operation> tree_broadcast(const TensorView& buf, int root);
std::unique_ptr<Operation> pipeline_broadcast(const TensorView& buf, int root);

std::unique_ptr<Operation> pairwise_alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                                              const TensorView& recv, const std::vector<std::int64_t>& recv_counts);

std::unique_ptr<Operation> dissemination_barrier();
// An empty message to and from every peer: connects all endpoints and shows
// that every rank is there.
std::unique_ptr<Operation> handshake();

std::unique_ptr<Operation> tagged_send(const TensorView& buf, int peer, int tag);
std::unique_ptr<Operation> tagged_recv(const TensorView& buf, int peer, int tag);
std::unique_ptr<Operation> p2p_group(const std::vector<P2pOp>& ops);

// `plan` is this rank's; every rank's `count` (elements per rank), `root`
// and `recv_counts` must agree, which the operation checks first.
std::unique_ptr<Operation> direct_gather(const ExchangePlan& plan, DType dtype, std::int64_t count, int root);
std::unique_ptr<Operation> direct_scatter(const ExchangePlan& plan, DType dtype, std::int64_t count, int root);
std::unique_ptr<Operation> direct_allgatherv(const ExchangePlan& plan, DType dtype,
                                             const std::vector<std::int64_t>& recv_counts);
std::unique_ptr<Operation> direct_reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                                                  const TensorView& recv, ReduceOp op);
// recv is empty off the root; `size` is the communicator's.
std::unique_ptr<Operation> direct_reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root,
                                         int size);

}  // namespace dtrain::comm::schedule
