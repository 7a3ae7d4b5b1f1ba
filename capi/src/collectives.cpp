// Collectives and point-to-point: parse the tensors, start, then either hand
// back a request or wait for it (req == NULL). The communicator checks how
// the views fit together.
#include <string>
#include <vector>

#include "arguments.hpp"
#include "base/enum_value.hpp"
#include "base/error.hpp"
#include "entry.hpp"
#include "handles.hpp"

using dtrain::TensorView;
using dtrain::capi::entry;
using dtrain::capi::require;

namespace {

// Starts the operation `what` on `comm`, from the communicator's thread,
// and completes it the way the caller asked.
template <typename Start>
dt_status run(const char* what, dt_comm* comm, dt_request** req, Start&& start) {
  return entry([&] {
    require(comm, "comm");
    comm->impl->check_thread(what);
    if (req != nullptr) {
      *req = new dt_request{comm->impl, start(*comm->impl)};
      return;
    }
    dtrain::comm::start_and_wait(*comm->impl, [&] { return start(*comm->impl); });
  });
}

// The view of argument `name`, ordered on the caller's `stream`.
TensorView operand(const DLTensor* tensor, const char* name, void* stream) {
  TensorView view = dtrain::capi::view_of(tensor, name);
  view.stream = stream;
  return view;
}

// What a rank passes for a tensor it does not use (recv of a reduce off the
// root): the communicator does not look at it.
TensorView unused() { return {}; }

// The group's ops, each checked in order (kind, then tensor); the
// communicator checks peers and tags.
std::vector<dtrain::comm::P2pOp> p2p_ops(const dt_p2p_op* ops, int count, void* stream) {
  if (count < 1) {
    dtrain::raise(DT_ERR_INVALID_ARGUMENT, "count " + std::to_string(count) + ": a group needs at least one op");
  }
  if (ops == nullptr) dtrain::raise(DT_ERR_INVALID_ARGUMENT, "ops is NULL");
  std::vector<dtrain::comm::P2pOp> group;
  group.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const dt_p2p_op& op = ops[i];
    const std::string name = "ops[" + std::to_string(i) + "]";
    if (op.kind != DT_P2P_SEND && op.kind != DT_P2P_RECV) {
      dtrain::raise(DT_ERR_INVALID_ARGUMENT,
                    name + ".kind " + std::to_string(op.kind) + " is neither DT_P2P_SEND nor DT_P2P_RECV");
    }
    group.push_back({op.kind == DT_P2P_SEND, operand(op.tensor, (name + ".tensor").c_str(), stream), op.peer, op.tag});
  }
  return group;
}

}  // namespace

extern "C" {

DT_API dt_status dt_allreduce(dt_comm* comm, const DLTensor* send, DLTensor* recv, dt_reduce_op op,
                              void* stream, dt_request** req) {
  return run("allreduce", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.allreduce(s, operand(recv, "recv", stream), dtrain::enum_value(op));
  });
}

DT_API dt_status dt_reduce_scatter(dt_comm* comm, const DLTensor* send, DLTensor* recv, dt_reduce_op op,
                                   void* stream, dt_request** req) {
  return run("reduce_scatter", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.reduce_scatter(s, operand(recv, "recv", stream), dtrain::enum_value(op));
  });
}

DT_API dt_status dt_allgather(dt_comm* comm, const DLTensor* send, DLTensor* recv, void* stream,
                              dt_request** req) {
  return run("allgather", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.allgather(s, operand(recv, "recv", stream));
  });
}

DT_API dt_status dt_broadcast(dt_comm* comm, DLTensor* buf, int root, void* stream, dt_request** req) {
  return run("broadcast", comm, req, [&](auto& c) { return c.broadcast(operand(buf, "buf", stream), root); });
}

DT_API dt_status dt_alltoall(dt_comm* comm, const DLTensor* send, DLTensor* recv, void* stream,
                             dt_request** req) {
  return run("alltoall", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.alltoall(s, operand(recv, "recv", stream));
  });
}

DT_API dt_status dt_alltoallv(dt_comm* comm, const DLTensor* send, const int64_t* send_counts, DLTensor* recv,
                              const int64_t* recv_counts, void* stream, dt_request** req) {
  return run("alltoallv", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.alltoallv(s, send_counts, operand(recv, "recv", stream), recv_counts);
  });
}

// The rooted collectives parse the tensor a rank does not use only where it
// is used: recv of reduce and gather on the root, send of scatter there.
DT_API dt_status dt_reduce(dt_comm* comm, const DLTensor* send, DLTensor* recv, dt_reduce_op op, int root,
                           void* stream, dt_request** req) {
  return run("reduce", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.reduce(s, c.rank() == root ? operand(recv, "recv", stream) : unused(), dtrain::enum_value(op), root);
  });
}

DT_API dt_status dt_gather(dt_comm* comm, const DLTensor* send, DLTensor* recv, int root, void* stream,
                           dt_request** req) {
  return run("gather", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.gather(s, c.rank() == root ? operand(recv, "recv", stream) : unused(), root);
  });
}

DT_API dt_status dt_scatter(dt_comm* comm, const DLTensor* send, DLTensor* recv, int root, void* stream,
                            dt_request** req) {
  return run("scatter", comm, req, [&](auto& c) {
    const TensorView r = operand(recv, "recv", stream);
    return c.scatter(c.rank() == root ? operand(send, "send", stream) : unused(), r, root);
  });
}

DT_API dt_status dt_allgatherv(dt_comm* comm, const DLTensor* send, DLTensor* recv, const int64_t* recv_counts,
                               void* stream, dt_request** req) {
  return run("allgatherv", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.allgatherv(s, operand(recv, "recv", stream), recv_counts);
  });
}

DT_API dt_status dt_reduce_scatterv(dt_comm* comm, const DLTensor* send, const int64_t* recv_counts, DLTensor* recv,
                                    dt_reduce_op op, void* stream, dt_request** req) {
  return run("reduce_scatterv", comm, req, [&](auto& c) {
    const TensorView s = operand(send, "send", stream);
    return c.reduce_scatterv(s, recv_counts, operand(recv, "recv", stream), dtrain::enum_value(op));
  });
}

DT_API dt_status dt_p2p_group(dt_comm* comm, const dt_p2p_op* ops, int count, void* stream, dt_request** req) {
  return run("p2p_group", comm, req, [&](auto& c) { return c.p2p_group(p2p_ops(ops, count, stream)); });
}

DT_API dt_status dt_send(dt_comm* comm, const DLTensor* buf, int peer, int tag, void* stream,
                         dt_request** req) {
  return run("send", comm, req, [&](auto& c) { return c.send(operand(buf, "buf", stream), peer, tag); });
}

DT_API dt_status dt_recv(dt_comm* comm, DLTensor* buf, int peer, int tag, void* stream, dt_request** req) {
  return run("recv", comm, req, [&](auto& c) { return c.recv(operand(buf, "buf", stream), peer, tag); });
}

DT_API dt_status dt_barrier(dt_comm* comm) {
  return run("barrier", comm, nullptr, [&](auto& c) { return c.barrier(); });
}

}  // extern "C"
