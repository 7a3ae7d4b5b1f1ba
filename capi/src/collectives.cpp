// Collectives and point-to-point: check, start, then either hand back a
// request or wait for it (req == NULL).
#include "base/enum_value.hpp"
#include "entry.hpp"
#include "handles.hpp"

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

}  // namespace

extern "C" {

DT_API dt_status dt_allreduce(dt_comm* comm, const DLTensor* send, DLTensor* recv, dt_reduce_op op,
                              void* stream, dt_request** req) {
  return run("allreduce", comm, req, [&](auto& c) { return c.allreduce(send, recv, dtrain::enum_value(op), stream); });
}

DT_API dt_status dt_reduce_scatter(dt_comm* comm, const DLTensor* send, DLTensor* recv, dt_reduce_op op,
                                   void* stream, dt_request** req) {
  return run("reduce_scatter", comm, req, [&](auto& c) { return c.reduce_scatter(send, recv, dtrain::enum_value(op), stream); });
}

DT_API dt_status dt_allgather(dt_comm* comm, const DLTensor* send, DLTensor* recv, void* stream,
                              dt_request** req) {
  return run("allgather", comm, req, [&](auto& c) { return c.allgather(send, recv, stream); });
}

DT_API dt_status dt_broadcast(dt_comm* comm, DLTensor* buf, int root, void* stream, dt_request** req) {
  return run("broadcast", comm, req, [&](auto& c) { return c.broadcast(buf, root, stream); });
}

DT_API dt_status dt_alltoall(dt_comm* comm, const DLTensor* send, DLTensor* recv, void* stream,
                             dt_request** req) {
  return run("alltoall", comm, req, [&](auto& c) { return c.alltoall(send, recv, stream); });
}

DT_API dt_status dt_alltoallv(dt_comm* comm, const DLTensor* send, const int64_t* send_counts, DLTensor* recv,
                              const int64_t* recv_counts, void* stream, dt_request** req) {
  return run("alltoallv", comm, req, [&](auto& c) { return c.alltoallv(send, send_counts, recv, recv_counts, stream); });
}

DT_API dt_status dt_reduce(dt_comm* comm, const DLTensor* send, DLTensor* recv, dt_reduce_op op, int root,
                           void* stream, dt_request** req) {
  return run("reduce", comm, req, [&](auto& c) { return c.reduce(send, recv, dtrain::enum_value(op), root, stream); });
}

DT_API dt_status dt_gather(dt_comm* comm, const DLTensor* send, DLTensor* recv, int root, void* stream,
                           dt_request** req) {
  return run("gather", comm, req, [&](auto& c) { return c.gather(send, recv, root, stream); });
}

DT_API dt_status dt_scatter(dt_comm* comm, const DLTensor* send, DLTensor* recv, int root, void* stream,
                            dt_request** req) {
  return run("scatter", comm, req, [&](auto& c) { return c.scatter(send, recv, root, stream); });
}

DT_API dt_status dt_allgatherv(dt_comm* comm, const DLTensor* send, DLTensor* recv, const int64_t* recv_counts,
                               void* stream, dt_request** req) {
  return run("allgatherv", comm, req, [&](auto& c) { return c.allgatherv(send, recv, recv_counts, stream); });
}

DT_API dt_status dt_reduce_scatterv(dt_comm* comm, const DLTensor* send, const int64_t* recv_counts, DLTensor* recv,
                                    dt_reduce_op op, void* stream, dt_request** req) {
  return run("reduce_scatterv", comm, req, [&](auto& c) {
    return c.reduce_scatterv(send, recv_counts, recv, dtrain::enum_value(op), stream);
  });
}

DT_API dt_status dt_p2p_group(dt_comm* comm, const dt_p2p_op* ops, int count, void* stream, dt_request** req) {
  return run("p2p_group", comm, req, [&](auto& c) { return c.p2p_group(ops, count, stream); });
}

DT_API dt_status dt_send(dt_comm* comm, const DLTensor* buf, int peer, int tag, void* stream,
                         dt_request** req) {
  return run("send", comm, req, [&](auto& c) { return c.send(buf, peer, tag, stream); });
}

DT_API dt_status dt_recv(dt_comm* comm, DLTensor* buf, int peer, int tag, void* stream, dt_request** req) {
  return run("recv", comm, req, [&](auto& c) { return c.recv(buf, peer, tag, stream); });
}

DT_API dt_status dt_barrier(dt_comm* comm) {
  return run("barrier", comm, nullptr, [&](auto& c) { return c.barrier(); });
}

}  // extern "C"
