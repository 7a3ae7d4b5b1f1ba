// A backend written as one member function per kind of operation: start()
// calls Derived's start_<kind>() with the descriptor's fields. Derived
// declares every start_<kind>() (privately, befriending this class).
#pragma once

#include "comm/backend.hpp"

namespace dtrain::comm {

template <typename Derived>
class PerKindBackend : public Backend {
 public:
  RequestPtr start(const Collective& op) final {
    Derived& self = static_cast<Derived&>(*this);
    switch (op.kind) {
      case CallKind::allreduce: return self.start_allreduce(op.send, op.recv, op.op);
      case CallKind::reduce_scatter: return self.start_reduce_scatter(op.send, op.recv, op.op);
      case CallKind::allgather: return self.start_allgather(op.send, op.recv);
      case CallKind::broadcast: return self.start_broadcast(op.recv, op.root);
      case CallKind::alltoallv: return self.start_alltoallv(op.send, op.send_counts, op.recv, op.recv_counts);
      case CallKind::send: return self.start_send(op.send, op.peer, op.tag);
      case CallKind::recv: return self.start_recv(op.recv, op.peer, op.tag);
      case CallKind::barrier: return self.start_barrier();
      case CallKind::reduce: return self.start_reduce(op.send, op.recv, op.op, op.root);
      case CallKind::gather: return self.start_gather(op.send, op.recv, op.root);
      case CallKind::scatter: return self.start_scatter(op.send, op.recv, op.root);
      case CallKind::allgatherv: return self.start_allgatherv(op.send, op.recv, op.recv_counts);
      case CallKind::reduce_scatterv: return self.start_reduce_scatterv(op.send, op.recv_counts, op.recv, op.op);
      case CallKind::p2p_group: return self.start_p2p_group(op.group);
      default: unsupported(op);
    }
  }
};

}  // namespace dtrain::comm
