#include "comm/backends/self/self_backend.hpp"

#include <algorithm>
#include <cstring>

namespace dtrain::comm {

namespace {

void copy(const TensorView& from, const TensorView& to) {
  if (from.data != to.data && from.bytes() > 0) std::memmove(to.data, from.data, from.bytes());
}

}  // namespace

RequestPtr SelfBackend::started(const char* op) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto request = std::make_shared<Request>(std::string(op) + " #" + std::to_string(++sequence_));
  if (aborted_) request->complete(DT_ERR_ABORTED, "rank 0: " + request->what() + " aborted");
  return request;
}

RequestPtr SelfBackend::start(const Collective& op) {
  switch (op.kind) {
    case CallKind::send:
    case CallKind::recv:
    case CallKind::p2p_group: return p2p(op);
    default: return collective(op);
  }
}

// With one rank every reduction, AVG included, is the rank's own data, and
// every collective's result is what the rank sends: the part of it that
// goes to the rank itself.
RequestPtr SelfBackend::collective(const Collective& op) {
  RequestPtr request = started(call_kind_name(op.kind));
  if (request->done()) return request;
  switch (op.kind) {
    case CallKind::barrier:
    case CallKind::broadcast: break;
    case CallKind::alltoallv:
      if (op.send_counts[0] != op.recv_counts[0]) {
        request->complete(DT_ERR_MISMATCH, "rank 0: alltoallv sends " + std::to_string(op.send_counts[0]) +
                                               " elements to itself but expects to receive " +
                                               std::to_string(op.recv_counts[0]));
        return request;
      }
      copy(op.send.slice(0, op.send_counts[0]), op.recv.slice(0, op.recv_counts[0]));
      break;
    case CallKind::allgatherv: copy(op.send, op.recv.slice(0, op.send.count)); break;
    case CallKind::reduce_scatterv: copy(op.send.slice(0, op.recv_counts[0]), op.recv); break;
    case CallKind::allreduce:
    case CallKind::reduce_scatter:
    case CallKind::allgather:
    case CallKind::reduce:
    case CallKind::gather:
    case CallKind::scatter: copy(op.send, op.recv); break;
    default: unsupported(op);
  }
  request->complete(DT_OK);
  return request;
}

void SelfBackend::deliver(const PendingRecv& to, DType dtype, const void* bytes, std::int64_t count) {
  const TensorView& buf = to.buf;
  const RequestPtr& request = to.request;
  if (dtype != buf.dtype || count != buf.count) {
    request->complete(DT_ERR_MISMATCH, "rank 0: " + request->what() + ": a receive of " + std::to_string(buf.count) +
                                           " " + dtype_name(buf.dtype) + " matched a send of " +
                                           std::to_string(count) + " " + dtype_name(dtype));
    return;
  }
  if (buf.bytes() > 0 && buf.data != bytes) std::memmove(buf.data, bytes, buf.bytes());
  if (--*to.outstanding == 0) request->complete(DT_OK);
}

void SelfBackend::post_send(const TensorView& buf, int tag) {
  auto match = std::find_if(posted_.begin(), posted_.end(), [&](const PendingRecv& p) { return p.tag == tag; });
  if (match != posted_.end()) {
    PendingRecv pending = *match;
    posted_.erase(match);
    deliver(pending, buf.dtype, buf.data, buf.count);
  } else {
    // Eager: the message is buffered so a blocking send to oneself returns.
    const auto* bytes = static_cast<const unsigned char*>(buf.data);
    unexpected_.push_back({tag, buf.dtype, std::vector<unsigned char>(bytes, bytes + buf.bytes()), buf.count});
  }
}

void SelfBackend::post_recv(const PendingRecv& recv) {
  auto match =
      std::find_if(unexpected_.begin(), unexpected_.end(), [&](const Message& m) { return m.tag == recv.tag; });
  if (match != unexpected_.end()) {
    deliver(recv, match->dtype, match->bytes.data(), match->count);
    unexpected_.erase(match);
  } else {
    posted_.push_back(recv);
  }
}

// A message to oneself is matched to a receive by tag.
RequestPtr SelfBackend::p2p(const Collective& op) {
  RequestPtr request = started(call_kind_name(op.kind));
  if (request->done()) return request;
  std::lock_guard<std::mutex> lock(mutex_);
  if (op.kind == CallKind::send) {
    post_send(op.send, op.tag);
    request->complete(DT_OK);
    return request;
  }
  if (op.kind == CallKind::recv) {
    post_recv({op.tag, op.recv, request, std::make_shared<int>(1)});
    return request;
  }
  // One count for the call itself, so that no receive completes the group
  // before every op is placed.
  auto outstanding = std::make_shared<int>(1);
  for (const P2pOp& p : op.group) {
    if (p.is_send) post_send(p.buf, p.tag);
  }
  for (const P2pOp& p : op.group) {
    if (p.is_send) continue;
    ++*outstanding;
    post_recv({p.tag, p.buf, request, outstanding});
  }
  if (--*outstanding == 0) request->complete(DT_OK);
  return request;
}

std::unique_ptr<Backend> SelfBackend::split(int color, int, int* new_rank, int* new_size) {
  if (color == DT_UNDEF) return nullptr;
  *new_rank = 0;
  *new_size = 1;
  return std::make_unique<SelfBackend>();
}

void SelfBackend::abort() {
  std::deque<PendingRecv> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    pending.swap(posted_);
    unexpected_.clear();
  }
  for (auto& p : pending) p.request->complete(DT_ERR_ABORTED, "rank 0: " + p.request->what() + " aborted");
}

}  // namespace dtrain::comm
