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

RequestPtr SelfBackend::finished(const char* op) {
  RequestPtr request = started(op);
  request->complete(DT_OK);
  return request;
}

// With one rank every reduction, AVG included, is the rank's own data.
RequestPtr SelfBackend::allreduce(const TensorView& send, const TensorView& recv, ReduceOp) {
  copy(send, recv);
  return finished("allreduce");
}

RequestPtr SelfBackend::reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp) {
  copy(send, recv);
  return finished("reduce_scatter");
}

RequestPtr SelfBackend::allgather(const TensorView& send, const TensorView& recv) {
  copy(send, recv);
  return finished("allgather");
}

RequestPtr SelfBackend::broadcast(const TensorView&, int) { return finished("broadcast"); }

RequestPtr SelfBackend::alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                                  const TensorView& recv, const std::vector<std::int64_t>& recv_counts) {
  if (send_counts[0] != recv_counts[0]) {
    RequestPtr request = started("alltoallv");
    request->complete(DT_ERR_MISMATCH, "rank 0: alltoallv sends " + std::to_string(send_counts[0]) +
                                           " elements to itself but expects to receive " +
                                           std::to_string(recv_counts[0]));
    return request;
  }
  copy(send.slice(0, send_counts[0]), recv.slice(0, recv_counts[0]));
  return finished("alltoallv");
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

RequestPtr SelfBackend::send(const TensorView& buf, int, int tag) {
  RequestPtr request = started("send");
  if (request->done()) return request;
  std::lock_guard<std::mutex> lock(mutex_);
  post_send(buf, tag);
  request->complete(DT_OK);
  return request;
}

RequestPtr SelfBackend::recv(const TensorView& buf, int, int tag) {
  RequestPtr request = started("recv");
  if (request->done()) return request;
  std::lock_guard<std::mutex> lock(mutex_);
  post_recv({tag, buf, request, std::make_shared<int>(1)});
  return request;
}

RequestPtr SelfBackend::p2p_group(const std::vector<P2pOp>& ops) {
  RequestPtr request = started("p2p_group");
  if (request->done()) return request;
  // One count for the call itself, so that no receive completes the group
  // before every op is placed.
  auto outstanding = std::make_shared<int>(1);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const P2pOp& op : ops) {
    if (op.is_send) post_send(op.buf, op.tag);
  }
  for (const P2pOp& op : ops) {
    if (op.is_send) continue;
    ++*outstanding;
    post_recv({op.tag, op.buf, request, outstanding});
  }
  if (--*outstanding == 0) request->complete(DT_OK);
  return request;
}

RequestPtr SelfBackend::reduce(const TensorView& send, const TensorView& recv, ReduceOp, int) {
  copy(send, recv);
  return finished("reduce");
}

RequestPtr SelfBackend::gather(const TensorView& send, const TensorView& recv, int) {
  copy(send, recv);
  return finished("gather");
}

RequestPtr SelfBackend::scatter(const TensorView& send, const TensorView& recv, int) {
  copy(send, recv);
  return finished("scatter");
}

RequestPtr SelfBackend::allgatherv(const TensorView& send, const TensorView& recv, const std::vector<std::int64_t>&) {
  copy(send, recv.slice(0, send.count));
  return finished("allgatherv");
}

RequestPtr SelfBackend::reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                                        const TensorView& recv, ReduceOp) {
  copy(send.slice(0, recv_counts[0]), recv);
  return finished("reduce_scatterv");
}

RequestPtr SelfBackend::barrier() { return finished("barrier"); }

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
