#include "comm/communicator.hpp"

#include <numeric>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/flat_tensor.hpp"
#include "base/log.hpp"
#include "device/probe.hpp"

namespace dtrain::comm {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

// The view of argument `arg`, checked, with the stream its operation runs on.
TensorView operand(const DLTensor* tensor, const char* arg, void* stream) {
  TensorView view = device::check_tensor(tensor, arg);
  view.stream = stream;
  return view;
}

std::string count_text(std::int64_t n) { return std::to_string(n) + (n == 1 ? " element" : " elements"); }

void require_same_dtype(const TensorView& a, const char* a_name, const TensorView& b, const char* b_name) {
  if (a.dtype != b.dtype) {
    invalid(std::string(a_name) + " is " + dtype_name(a.dtype) + " but " + b_name + " is " +
            dtype_name(b.dtype));
  }
}

ReduceOp check_op(int op, DType dtype) {
  switch (op) {
    case DT_SUM:
    case DT_MAX:
    case DT_MIN:
    case DT_PROD:
      return static_cast<ReduceOp>(op);
    case DT_AVG:
      if (!dtype_is_floating(dtype)) {
        invalid(std::string("op: DT_AVG needs a floating-point dtype, not ") + dtype_name(dtype));
      }
      return ReduceOp::avg;
  }
  invalid("op: " + std::to_string(op) + " is not a dt_reduce_op");
}

// The view a rank passes for a tensor it does not use (recv of a reduce off
// the root, say): no data, no elements, and the dtype and placement of
// `used`, so that backends route the operation by the tensors in use.
TensorView unused_like(const TensorView& used) {
  TensorView view = used;
  view.data = nullptr;
  view.count = 0;
  return view;
}

// Per-rank counts of an alltoallv or a v-collective, checked against the tensor they index.
std::vector<std::int64_t> check_counts(const std::int64_t* counts, int size, const TensorView& tensor,
                                       const char* name, const char* tensor_name) {
  if (counts == nullptr) invalid(std::string(name) + " is NULL");
  std::vector<std::int64_t> result(counts, counts + size);
  std::int64_t total = 0;
  for (int r = 0; r < size; ++r) {
    if (result[r] < 0) {
      invalid(std::string(name) + "[" + std::to_string(r) + "] = " + std::to_string(result[r]) +
              " is negative");
    }
    if (result[r] > tensor.count - total) {
      invalid(std::string(name) + " add up to more than " + tensor_name + "'s " + count_text(tensor.count));
    }
    total += result[r];
  }
  return result;
}

}  // namespace

Communicator::Communicator(int rank, int size, int timeout_ms, std::unique_ptr<Backend> backend)
    : rank_(rank), size_(size), timeout_ms_(timeout_ms), backend_(std::move(backend)) {}

Communicator::~Communicator() { backend_->abort(); }

std::string Communicator::rank_prefix() const { return "rank " + std::to_string(rank_) + ": "; }

void Communicator::ensure_usable() const {
  if (!broken_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(broken_mutex_);
  raise(DT_ERR_ABORTED, rank_prefix() + "the communicator is broken (" + broken_reason_ +
                            "); destroy it and create a new one");
}

void Communicator::mark_broken(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    if (broken_.load()) return;
    broken_reason_ = reason;
    broken_.store(true, std::memory_order_release);
  }
  backend_->abort();
}

void Communicator::fail(dt_status status, const std::string& message) {
  if (breaks_communicator(status) || status == DT_ERR_ABORTED) {
    DT_LOG(warn) << "communicator broken: " << message;
    mark_broken(message);
  }
  raise(status, message);
}

RequestPtr Communicator::allreduce(const DLTensor* send, const DLTensor* recv, int op, void* stream) {
  TensorView s = operand(send, "send", stream);
  TensorView r = operand(recv, "recv", stream);
  require_same_dtype(s, "send", r, "recv");
  if (s.count != r.count) {
    invalid("allreduce: send has " + count_text(s.count) + " but recv has " + count_text(r.count));
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return backend_->allreduce(s, r, reduce);
}

RequestPtr Communicator::reduce_scatter(const DLTensor* send, const DLTensor* recv, int op, void* stream) {
  TensorView s = operand(send, "send", stream);
  TensorView r = operand(recv, "recv", stream);
  require_same_dtype(s, "send", r, "recv");
  if (s.count != r.count * size_) {
    invalid("reduce_scatter: send must hold size (" + std::to_string(size_) + ") x recv's " +
            count_text(r.count) + ", but has " + count_text(s.count));
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return backend_->reduce_scatter(s, r, reduce);
}

RequestPtr Communicator::allgather(const DLTensor* send, const DLTensor* recv, void* stream) {
  TensorView s = operand(send, "send", stream);
  TensorView r = operand(recv, "recv", stream);
  require_same_dtype(s, "send", r, "recv");
  if (r.count != s.count * size_) {
    invalid("allgather: recv must hold size (" + std::to_string(size_) + ") x send's " +
            count_text(s.count) + ", but has " + count_text(r.count));
  }
  ensure_usable();
  return backend_->allgather(s, r);
}

void Communicator::check_root(int root) const {
  if (root < 0 || root >= size_) {
    invalid("root " + std::to_string(root) + " is not a rank of this communicator (size " +
            std::to_string(size_) + ")");
  }
}

void Communicator::check_peer(int peer, const std::string& name) const {
  if (peer < 0 || peer >= size_) {
    invalid(name + " " + std::to_string(peer) + " is not a rank of this communicator (size " +
            std::to_string(size_) + ")");
  }
}

RequestPtr Communicator::broadcast(const DLTensor* buf, int root, void* stream) {
  TensorView b = operand(buf, "buf", stream);
  check_root(root);
  ensure_usable();
  return backend_->broadcast(b, root);
}

RequestPtr Communicator::alltoall(const DLTensor* send, const DLTensor* recv, void* stream) {
  TensorView s = operand(send, "send", stream);
  TensorView r = operand(recv, "recv", stream);
  require_same_dtype(s, "send", r, "recv");
  if (s.count != r.count || s.count % size_ != 0) {
    invalid("alltoall: send and recv must hold the same multiple of size (" + std::to_string(size_) +
            "); send has " + count_text(s.count) + ", recv has " + count_text(r.count));
  }
  ensure_usable();
  std::vector<std::int64_t> counts(size_, s.count / size_);
  return backend_->alltoallv(s, counts, r, counts);
}

RequestPtr Communicator::alltoallv(const DLTensor* send, const std::int64_t* send_counts,
                                   const DLTensor* recv, const std::int64_t* recv_counts, void* stream) {
  TensorView s = operand(send, "send", stream);
  TensorView r = operand(recv, "recv", stream);
  require_same_dtype(s, "send", r, "recv");
  auto sc = check_counts(send_counts, size_, s, "send_counts", "send");
  auto rc = check_counts(recv_counts, size_, r, "recv_counts", "recv");
  ensure_usable();
  return backend_->alltoallv(s, sc, r, rc);
}

RequestPtr Communicator::send(const DLTensor* buf, int peer, int tag, void* stream) {
  TensorView b = operand(buf, "buf", stream);
  check_peer(peer, "peer");
  if (tag < 0) invalid("tag " + std::to_string(tag) + " is negative");
  ensure_usable();
  return backend_->send(b, peer, tag);
}

RequestPtr Communicator::recv(const DLTensor* buf, int peer, int tag, void* stream) {
  TensorView b = operand(buf, "buf", stream);
  check_peer(peer, "peer");
  if (tag < 0) invalid("tag " + std::to_string(tag) + " is negative");
  ensure_usable();
  return backend_->recv(b, peer, tag);
}

RequestPtr Communicator::barrier() {
  ensure_usable();
  return backend_->barrier();
}

RequestPtr Communicator::reduce(const DLTensor* send, const DLTensor* recv, int op, int root, void* stream) {
  TensorView s = operand(send, "send", stream);
  check_root(root);
  TensorView r = unused_like(s);
  if (rank_ == root) {
    r = operand(recv, "recv", stream);
    require_same_dtype(s, "send", r, "recv");
    if (s.count != r.count) {
      invalid("reduce: send has " + count_text(s.count) + " but recv on the root has " + count_text(r.count));
    }
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return backend_->reduce(s, r, reduce, root);
}

RequestPtr Communicator::gather(const DLTensor* send, const DLTensor* recv, int root, void* stream) {
  TensorView s = operand(send, "send", stream);
  check_root(root);
  TensorView r = unused_like(s);
  if (rank_ == root) {
    r = operand(recv, "recv", stream);
    require_same_dtype(s, "send", r, "recv");
    if (r.count != s.count * size_) {
      invalid("gather: recv on the root must hold size (" + std::to_string(size_) + ") x send's " +
              count_text(s.count) + ", but has " + count_text(r.count));
    }
  }
  ensure_usable();
  return backend_->gather(s, r, root);
}

RequestPtr Communicator::scatter(const DLTensor* send, const DLTensor* recv, int root, void* stream) {
  TensorView r = operand(recv, "recv", stream);
  check_root(root);
  TensorView s = unused_like(r);
  if (rank_ == root) {
    s = operand(send, "send", stream);
    require_same_dtype(s, "send", r, "recv");
    if (s.count != r.count * size_) {
      invalid("scatter: send on the root must hold size (" + std::to_string(size_) + ") x recv's " +
              count_text(r.count) + ", but has " + count_text(s.count));
    }
  }
  ensure_usable();
  return backend_->scatter(s, r, root);
}

RequestPtr Communicator::allgatherv(const DLTensor* send, const DLTensor* recv, const std::int64_t* recv_counts,
                                    void* stream) {
  TensorView s = operand(send, "send", stream);
  TensorView r = operand(recv, "recv", stream);
  require_same_dtype(s, "send", r, "recv");
  auto counts = check_counts(recv_counts, size_, r, "recv_counts", "recv");
  if (s.count != counts[rank_]) {
    invalid("allgatherv: send has " + count_text(s.count) + " but recv_counts[" + std::to_string(rank_) +
            "] (this rank) is " + std::to_string(counts[rank_]));
  }
  ensure_usable();
  return backend_->allgatherv(s, r, counts);
}

RequestPtr Communicator::reduce_scatterv(const DLTensor* send, const std::int64_t* recv_counts,
                                         const DLTensor* recv, int op, void* stream) {
  TensorView s = operand(send, "send", stream);
  TensorView r = operand(recv, "recv", stream);
  require_same_dtype(s, "send", r, "recv");
  auto counts = check_counts(recv_counts, size_, s, "recv_counts", "send");
  if (r.count != counts[rank_]) {
    invalid("reduce_scatterv: recv has " + count_text(r.count) + " but recv_counts[" + std::to_string(rank_) +
            "] (this rank) is " + std::to_string(counts[rank_]));
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return backend_->reduce_scatterv(s, counts, r, reduce);
}

RequestPtr Communicator::p2p_group(const dt_p2p_op* ops, int count, void* stream) {
  if (count < 1) invalid("count " + std::to_string(count) + ": a group needs at least one op");
  if (ops == nullptr) invalid("ops is NULL");
  std::vector<P2pOp> group;
  group.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const dt_p2p_op& op = ops[i];
    const std::string name = "ops[" + std::to_string(i) + "]";
    if (op.kind != DT_P2P_SEND && op.kind != DT_P2P_RECV) {
      invalid(name + ".kind " + std::to_string(op.kind) + " is neither DT_P2P_SEND nor DT_P2P_RECV");
    }
    const std::string tensor_name = name + ".tensor";
    TensorView buf = operand(op.tensor, tensor_name.c_str(), stream);
    check_peer(op.peer, name + ".peer");
    if (op.tag < 0) invalid(name + ".tag " + std::to_string(op.tag) + " is negative");
    group.push_back({op.kind == DT_P2P_SEND, buf, op.peer, op.tag});
  }
  ensure_usable();
  return backend_->p2p_group(group);
}

void Communicator::wait(const RequestPtr& request, int timeout_ms) {
  int limit = timeout_ms < 0 ? timeout_ms_ : timeout_ms;
  // One already over (a backend may run small blocking operations at once)
  // needs no deadline.
  if (!request->done() && !backend_->wait(request, Clock::now() + std::chrono::milliseconds(limit))) {
    std::string silent = backend_->unresponsive_ranks(*request);
    fail(DT_ERR_TIMEOUT, timeout_message(rank_prefix() + request->what(), limit, silent));
  }
  dt_status status = request->status();
  if (status != DT_OK) fail(status, request->message());
}

dt_status Communicator::test(const RequestPtr& request) {
  if (!request->done()) return DT_INPROGRESS;
  dt_status status = request->status();
  if (status != DT_OK) fail(status, request->message());
  return DT_OK;
}

std::shared_ptr<Communicator> Communicator::split(int color, int key) {
  if (color < 0 && color != DT_UNDEF) {
    invalid("color " + std::to_string(color) + " is negative (use DT_UNDEF to leave this rank out)");
  }
  ensure_usable();
  int new_rank = -1;
  int new_size = 0;
  auto backend = backend_->split(color, key, &new_rank, &new_size);
  if (!backend) return nullptr;
  return std::make_shared<Communicator>(new_rank, new_size, timeout_ms_, std::move(backend));
}

void Communicator::abort() { mark_broken("aborted by dt_comm_abort"); }

void Communicator::close() { mark_broken("the communicator was destroyed"); }

double sum_over_ranks(Communicator& comm, double local) {
  double value = local;
  FlatTensor tensor(&value, 1, DType::f64);
  start_and_wait(comm, [&] { return comm.allreduce(tensor.get(), tensor.get(), DT_SUM); });
  return value;
}

}  // namespace dtrain::comm
