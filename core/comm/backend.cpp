#include "comm/backend.hpp"

#include <utility>

namespace dtrain::comm {

namespace {

Collective describe(CallKind kind, const TensorView& send, const TensorView& recv) {
  Collective op;
  op.kind = kind;
  op.send = send;
  op.recv = recv;
  return op;
}

}  // namespace

RequestPtr Backend::allreduce(const TensorView& send, const TensorView& recv, ReduceOp reduction) {
  Collective op = describe(CallKind::allreduce, send, recv);
  op.op = reduction;
  return start(op);
}

RequestPtr Backend::reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp reduction) {
  Collective op = describe(CallKind::reduce_scatter, send, recv);
  op.op = reduction;
  return start(op);
}

RequestPtr Backend::allgather(const TensorView& send, const TensorView& recv) {
  return start(describe(CallKind::allgather, send, recv));
}

RequestPtr Backend::broadcast(const TensorView& buf, int root) {
  Collective op = describe(CallKind::broadcast, buf, buf);
  op.root = root;
  return start(op);
}

RequestPtr Backend::alltoallv(const TensorView& send, std::vector<std::int64_t> send_counts, const TensorView& recv,
                              std::vector<std::int64_t> recv_counts) {
  Collective op = describe(CallKind::alltoallv, send, recv);
  op.send_counts = std::move(send_counts);
  op.recv_counts = std::move(recv_counts);
  return start(op);
}

RequestPtr Backend::send(const TensorView& buf, int peer, int tag) {
  Collective op = describe(CallKind::send, buf, {});
  op.peer = peer;
  op.tag = tag;
  return start(op);
}

RequestPtr Backend::recv(const TensorView& buf, int peer, int tag) {
  Collective op = describe(CallKind::recv, {}, buf);
  op.peer = peer;
  op.tag = tag;
  return start(op);
}

RequestPtr Backend::barrier() { return start(describe(CallKind::barrier, {}, {})); }

RequestPtr Backend::reduce(const TensorView& send, const TensorView& recv, ReduceOp reduction, int root) {
  Collective op = describe(CallKind::reduce, send, recv);
  op.op = reduction;
  op.root = root;
  return start(op);
}

RequestPtr Backend::gather(const TensorView& send, const TensorView& recv, int root) {
  Collective op = describe(CallKind::gather, send, recv);
  op.root = root;
  return start(op);
}

RequestPtr Backend::scatter(const TensorView& send, const TensorView& recv, int root) {
  Collective op = describe(CallKind::scatter, send, recv);
  op.root = root;
  return start(op);
}

RequestPtr Backend::allgatherv(const TensorView& send, const TensorView& recv, std::vector<std::int64_t> recv_counts) {
  Collective op = describe(CallKind::allgatherv, send, recv);
  op.recv_counts = std::move(recv_counts);
  return start(op);
}

RequestPtr Backend::reduce_scatterv(const TensorView& send, std::vector<std::int64_t> recv_counts,
                                    const TensorView& recv, ReduceOp reduction) {
  Collective op = describe(CallKind::reduce_scatterv, send, recv);
  op.op = reduction;
  op.recv_counts = std::move(recv_counts);
  return start(op);
}

RequestPtr Backend::p2p_group(std::vector<P2pOp> ops) {
  Collective op = describe(CallKind::p2p_group, {}, {});
  op.group = std::move(ops);
  return start(op);
}

void Backend::unsupported(const Collective& op) const {
  raise(DT_ERR_UNSUPPORTED, std::string("the ") + name() + " backend does not implement " + call_kind_name(op.kind));
}

}  // namespace dtrain::comm
