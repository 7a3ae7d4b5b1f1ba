// One operation as data: what it is (its kind, as the call check names it),
// the tensors, the reduction, the root, the per-rank counts, the peer and
// tag of a message, the messages of a group. It travels whole from the
// communicator through the device router to a backend (backend.hpp), and
// the schedules that run every kind alike (the shared-memory exchange,
// local_exchange.hpp) take it as it is. The stream an operation is ordered
// after travels in its views (TensorView::stream).
#pragma once

#include <cstdint>
#include <vector>

#include "base/tensor.hpp"
#include "comm/call_check.hpp"
#include "comm/reduce_op.hpp"

namespace dtrain::comm {

// One send or receive of a point-to-point group (dt_p2p_group).
struct P2pOp {
  bool is_send = false;
  TensorView buf;
  int peer = 0;
  int tag = 0;
};

struct Collective {
  CallKind kind = CallKind::allreduce;
  // broadcast: both the buffer; send: `send`; recv: `recv`. A view a rank
  // does not use (recv of a reduce or gather off the root, send of a
  // scatter off the root) is empty: no data, no elements, and the dtype
  // and placement of the tensor the rank does use.
  TensorView send;
  TensorView recv;
  ReduceOp op = ReduceOp::sum;  // the reductions'
  int root = 0;                 // the rooted ones'
  // alltoallv: elements to and from each rank (alltoall is one, all alike);
  // allgatherv and reduce_scatterv: recv_counts alone. Empty otherwise.
  std::vector<std::int64_t> send_counts;
  std::vector<std::int64_t> recv_counts;
  int peer = 0;  // send and recv
  int tag = 0;
  std::vector<P2pOp> group;  // p2p_group: at least one, started together
};

}  // namespace dtrain::comm
