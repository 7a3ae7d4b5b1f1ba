#include "comm/communicator.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/env.hpp"
#include "base/log.hpp"
#include "comm/flight_recorder.hpp"

namespace dtrain::comm {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

// The bytes an operation records for a buffer (op_log.hpp).
std::int64_t bytes_of(const TensorView& view) { return static_cast<std::int64_t>(view.bytes()); }

// A dtype as a call records it (call_check.hpp).
std::int64_t dt(const TensorView& view) { return static_cast<std::int64_t>(view.dtype); }

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

Communicator::Communicator(int rank, int size, int timeout_ms, std::unique_ptr<Backend> backend,
                           std::string label)
    : rank_(rank),
      size_(size),
      timeout_ms_(timeout_ms),
      check_calls_(call_checks_enabled()),
      warn_after_s_(env::get_int("DTRAIN_WAIT_WARN_S", 0, 1 << 20).value_or(30)),
      log_(std::make_unique<OpLog>(std::move(label), rank, size, log::rank(), backend->name())),
      backend_(std::move(backend)) {}

namespace {

// The communicator whose next operation this thread waits for at once
// (expect_wait()), so that the exchange of calls that comes first can leave
// the hint to the operation.
thread_local const Communicator* t_hinted = nullptr;

}  // namespace

Communicator::Use::Use(Communicator& comm, const char* what) : comm_(comm) {
  const auto me = std::this_thread::get_id();
  std::thread::id inside;
  if (!comm.user_.compare_exchange_strong(inside, me, std::memory_order_acquire) && inside != me) {
    // A blocking call leaves the refusal to the operation it starts, which
    // can name itself.
    if (what == nullptr) return;
    const char* busy = comm.in_use_.load(std::memory_order_relaxed);
    const std::string message = comm.rank_prefix() + what + " called while another thread is in " +
                                (busy != nullptr ? busy : "an operation") +
                                " on the same communicator (one thread at a time may use it)";
    DT_LOG(warn) << "communicator broken: " << message;
    comm.mark_broken(message);
    raise(DT_ERR_INVALID_USAGE, message);
  }
  ++comm.depth_;
  if (what != nullptr) comm.in_use_.store(what, std::memory_order_relaxed);
  owns_ = true;
}

void Communicator::bind_thread(bool bind) {
  bound_thread_.store(bind ? std::this_thread::get_id() : std::thread::id(), std::memory_order_release);
}

void Communicator::check_thread(const char* what) {
  const std::thread::id bound = bound_thread_.load(std::memory_order_acquire);
  if (bound == std::thread::id() || bound == std::this_thread::get_id()) return;
  // Refused before anything starts: a second thread's operations could pair
  // with different calls on other ranks, and no rank could tell.
  std::string busy;
  const char* inside = in_use_.load(std::memory_order_relaxed);
  if (user_.load(std::memory_order_acquire) != std::thread::id() && inside != nullptr) {
    busy = std::string(", which is in ") + inside;
  }
  raise(DT_ERR_INVALID_USAGE,
        rank_prefix() + what + " called on a thread other than the communicator's (the thread that created it, or "
            "that last called dt_comm_bind_thread()" + busy + "); call dt_comm_bind_thread(comm, 1) on the thread "
            "that uses it now, or dt_comm_bind_thread(comm, 0) to let threads take turns");
}

Communicator::Use::~Use() {
  if (owns_ && --comm_.depth_ == 0) comm_.user_.store(std::thread::id(), std::memory_order_release);
}

void Communicator::expect_wait(bool on) {
  if (on) {
    t_hinted = this;
  } else if (t_hinted == this) {
    t_hinted = nullptr;
  }
  backend_->expect_wait(on);
}

template <typename Start>
RequestPtr Communicator::logged(const OpStart& op, Start&& start) {
  const std::uint64_t id = log_->begin(op);
  RequestPtr request;
  try {
    request = start();
  } catch (const Error& e) {
    log_->end(id, e.status());
    throw;
  } catch (...) {
    log_->end(id, DT_ERR_INTERNAL);
    throw;
  }
  request->record_in(log_.get(), id);
  return request;
}

template <typename Start>
RequestPtr Communicator::checked(Call call, std::int64_t bytes, Start&& start) {
  const OpStart op{call.kind, call.dtype, call.count, call.op, call.root, -1, bytes};
  return logged(op, [&] { return compared(call, start); });
}

template <typename Start>
RequestPtr Communicator::compared(Call call, Start&& start) {
  if (!check_calls_ || size_ == 1) return start();
  settle_checks(nullptr, Clock::now());
  call.sequence = ++collectives_;
  // Every rank's call, gathered by an allreduce (sum) of a table in which
  // each rank fills its own row: one collective that every rank runs the
  // same way whether it waits at once or not, and that a caller who waits
  // at once gets through the backend's fastest path.
  auto calls = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(size_) * kCallWords);
  const auto words = encode(call);
  std::copy(words.begin(), words.end(), calls->begin() + static_cast<std::ptrdiff_t>(rank_) * kCallWords);
  TensorView table;
  table.data = calls->data();
  table.count = static_cast<std::int64_t>(calls->size());
  table.dtype = DType::i64;
  const bool hinted = t_hinted == this;
  PendingCheck check{backend_->allreduce(table, table, ReduceOp::sum), std::move(calls), nullptr};
  if (hinted) {
    // A blocking caller: settled before the operation starts, which then
    // gets the hint again.
    wait_for(check.exchange, Clock::now() + std::chrono::milliseconds(timeout_ms_));
    verify(check, false);
    backend_->expect_wait(true);
    return start();
  }
  RequestPtr operation = start();
  check.operation = operation.get();
  std::lock_guard<std::mutex> lock(checks_mutex_);
  checks_.push_back(std::move(check));
  return operation;
}

void Communicator::wait_for(const RequestPtr& exchange, Clock::time_point deadline) {
  if (exchange->done() || backend_->wait(exchange, deadline)) return;
  const std::string silent = backend_->unresponsive_ranks(*exchange);
  fail(DT_ERR_TIMEOUT, timeout_message(rank_prefix() + exchange->what(), timeout_ms_, silent));
}

void Communicator::settle_checks(const Request* until, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(checks_mutex_);
  const bool queued = until != nullptr && std::any_of(checks_.begin(), checks_.end(), [until](const PendingCheck& c) {
                        return c.operation == until;
                      });
  while (!checks_.empty()) {
    const PendingCheck check = checks_.front();
    if (!check.exchange->done()) {
      if (!queued) return;
      lock.unlock();
      wait_for(check.exchange, deadline);
      lock.lock();
      continue;
    }
    checks_.pop_front();
    lock.unlock();
    verify(check, true);
    if (check.operation == until) return;
    lock.lock();
  }
}

void Communicator::verify(const PendingCheck& check, bool started) {
  if (check.exchange->status() != DT_OK) fail(check.exchange->status(), check.exchange->message());
  std::vector<Call> calls;
  for (int r = 0; r < size_; ++r) {
    calls.push_back(decode(check.calls->data() + static_cast<std::size_t>(r) * kCallWords));
  }
  if (std::adjacent_find(calls.begin(), calls.end(), std::not_equal_to<>()) == calls.end()) return;
  const std::string message = rank_prefix() + describe_disagreement(calls);
  if (started) {
    // The operation is queued: it may wait for messages that never come,
    // or move data that does not fit.
    DT_LOG(warn) << "communicator broken: " << message;
    mark_broken(message);
  } else {
    record_failure(message);
  }
  raise(DT_ERR_MISMATCH, message);
}

Communicator::~Communicator() { backend_->abort(); }

std::string Communicator::rank_prefix() const { return "rank " + std::to_string(rank_) + ": "; }

void Communicator::ensure_usable() const {
  if (!broken_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(broken_mutex_);
  raise(DT_ERR_ABORTED, rank_prefix() + "the communicator is broken (" + broken_reason_ +
                            "); destroy it and create a new one");
}

void Communicator::mark_broken(const std::string& reason, bool dump) {
  {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    if (broken_.load()) return;
    broken_reason_ = reason;
    broken_.store(true, std::memory_order_release);
  }
  backend_->abort();
  if (dump) record_failure(reason);
}

void Communicator::record_failure(const std::string& reason) {
  log_->note_failure(reason);
  flight::dump(log_->label() + " " + reason);
}

void Communicator::fail(dt_status status, const std::string& message) {
  if (breaks_communicator(status) || status == DT_ERR_ABORTED) {
    DT_LOG(warn) << "communicator broken: " << message;
    mark_broken(message);
  } else if (status == DT_ERR_MISMATCH) {
    record_failure(message);
  }
  raise(status, message);
}

RequestPtr Communicator::allreduce(const TensorView& s, const TensorView& r, int op) {
  Use use(*this, "allreduce");
  require_same_dtype(s, "send", r, "recv");
  if (s.count != r.count) {
    invalid("allreduce: send has " + count_text(s.count) + " but recv has " + count_text(r.count));
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return checked({CallKind::allreduce, 0, dt(s), s.count, static_cast<std::int64_t>(reduce)}, bytes_of(s),
                 [&] { return backend_->allreduce(s, r, reduce); });
}

RequestPtr Communicator::reduce_scatter(const TensorView& s, const TensorView& r, int op) {
  Use use(*this, "reduce_scatter");
  require_same_dtype(s, "send", r, "recv");
  if (s.count != r.count * size_) {
    invalid("reduce_scatter: send must hold size (" + std::to_string(size_) + ") x recv's " +
            count_text(r.count) + ", but has " + count_text(s.count));
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return checked({CallKind::reduce_scatter, 0, dt(s), r.count, static_cast<std::int64_t>(reduce)}, bytes_of(s),
                 [&] { return backend_->reduce_scatter(s, r, reduce); });
}

RequestPtr Communicator::allgather(const TensorView& s, const TensorView& r) {
  Use use(*this, "allgather");
  require_same_dtype(s, "send", r, "recv");
  if (r.count != s.count * size_) {
    invalid("allgather: recv must hold size (" + std::to_string(size_) + ") x send's " +
            count_text(s.count) + ", but has " + count_text(r.count));
  }
  ensure_usable();
  return checked({CallKind::allgather, 0, dt(s), s.count}, bytes_of(s),
                 [&] { return backend_->allgather(s, r); });
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

RequestPtr Communicator::broadcast(const TensorView& b, int root) {
  Use use(*this, "broadcast");
  check_root(root);
  ensure_usable();
  return checked({CallKind::broadcast, 0, dt(b), b.count, -1, root}, bytes_of(b),
                 [&] { return backend_->broadcast(b, root); });
}

RequestPtr Communicator::alltoall(const TensorView& s, const TensorView& r) {
  Use use(*this, "alltoall");
  require_same_dtype(s, "send", r, "recv");
  if (s.count != r.count || s.count % size_ != 0) {
    invalid("alltoall: send and recv must hold the same multiple of size (" + std::to_string(size_) +
            "); send has " + count_text(s.count) + ", recv has " + count_text(r.count));
  }
  ensure_usable();
  std::vector<std::int64_t> send_counts(size_, s.count / size_);
  std::vector<std::int64_t> recv_counts = send_counts;
  return checked({CallKind::alltoall, 0, dt(s), s.count}, bytes_of(s),
                 [&] { return backend_->alltoallv(s, std::move(send_counts), r, std::move(recv_counts)); });
}

RequestPtr Communicator::alltoallv(const TensorView& s, const std::int64_t* send_counts, const TensorView& r,
                                   const std::int64_t* recv_counts) {
  Use use(*this, "alltoallv");
  require_same_dtype(s, "send", r, "recv");
  auto sc = check_counts(send_counts, size_, s, "send_counts", "send");
  auto rc = check_counts(recv_counts, size_, r, "recv_counts", "recv");
  ensure_usable();
  return checked({CallKind::alltoallv, 0, dt(s)}, bytes_of(s),
                 [&] { return backend_->alltoallv(s, std::move(sc), r, std::move(rc)); });
}

RequestPtr Communicator::send(const TensorView& b, int peer, int tag) {
  Use use(*this, "send");
  check_peer(peer, "peer");
  if (tag < 0) invalid("tag " + std::to_string(tag) + " is negative");
  ensure_usable();
  return logged({OpKind::send, dt(b), b.count, -1, peer, tag, bytes_of(b)}, [&] { return backend_->send(b, peer, tag); });
}

RequestPtr Communicator::recv(const TensorView& b, int peer, int tag) {
  Use use(*this, "recv");
  check_peer(peer, "peer");
  if (tag < 0) invalid("tag " + std::to_string(tag) + " is negative");
  ensure_usable();
  return logged({OpKind::recv, dt(b), b.count, -1, peer, tag, bytes_of(b)}, [&] { return backend_->recv(b, peer, tag); });
}

RequestPtr Communicator::barrier() {
  Use use(*this, "barrier");
  ensure_usable();
  return checked({CallKind::barrier}, 0,
                 [&] { return backend_->barrier(); });
}

RequestPtr Communicator::reduce(const TensorView& s, const TensorView& recv, int op, int root) {
  Use use(*this, "reduce");
  check_root(root);
  TensorView r = unused_like(s);
  if (rank_ == root) {
    r = recv;
    require_same_dtype(s, "send", r, "recv");
    if (s.count != r.count) {
      invalid("reduce: send has " + count_text(s.count) + " but recv on the root has " + count_text(r.count));
    }
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return checked({CallKind::reduce, 0, dt(s), s.count, static_cast<std::int64_t>(reduce), root}, bytes_of(s),
                 [&] { return backend_->reduce(s, r, reduce, root); });
}

RequestPtr Communicator::gather(const TensorView& s, const TensorView& recv, int root) {
  Use use(*this, "gather");
  check_root(root);
  TensorView r = unused_like(s);
  if (rank_ == root) {
    r = recv;
    require_same_dtype(s, "send", r, "recv");
    if (r.count != s.count * size_) {
      invalid("gather: recv on the root must hold size (" + std::to_string(size_) + ") x send's " +
              count_text(s.count) + ", but has " + count_text(r.count));
    }
  }
  ensure_usable();
  return checked({CallKind::gather, 0, dt(s), s.count, -1, root}, bytes_of(s),
                 [&] { return backend_->gather(s, r, root); });
}

RequestPtr Communicator::scatter(const TensorView& send, const TensorView& r, int root) {
  Use use(*this, "scatter");
  check_root(root);
  TensorView s = unused_like(r);
  if (rank_ == root) {
    s = send;
    require_same_dtype(s, "send", r, "recv");
    if (s.count != r.count * size_) {
      invalid("scatter: send on the root must hold size (" + std::to_string(size_) + ") x recv's " +
              count_text(r.count) + ", but has " + count_text(s.count));
    }
  }
  ensure_usable();
  return checked({CallKind::scatter, 0, dt(r), r.count, -1, root}, bytes_of(r),
                 [&] { return backend_->scatter(s, r, root); });
}

RequestPtr Communicator::allgatherv(const TensorView& s, const TensorView& r, const std::int64_t* recv_counts) {
  Use use(*this, "allgatherv");
  require_same_dtype(s, "send", r, "recv");
  auto counts = check_counts(recv_counts, size_, r, "recv_counts", "recv");
  if (s.count != counts[rank_]) {
    invalid("allgatherv: send has " + count_text(s.count) + " but recv_counts[" + std::to_string(rank_) +
            "] (this rank) is " + std::to_string(counts[rank_]));
  }
  ensure_usable();
  return checked({CallKind::allgatherv, 0, dt(r), -1, -1, -1, counts_digest(counts)}, bytes_of(s),
                 [&] { return backend_->allgatherv(s, r, std::move(counts)); });
}

RequestPtr Communicator::reduce_scatterv(const TensorView& s, const std::int64_t* recv_counts, const TensorView& r,
                                         int op) {
  Use use(*this, "reduce_scatterv");
  require_same_dtype(s, "send", r, "recv");
  auto counts = check_counts(recv_counts, size_, s, "recv_counts", "send");
  if (r.count != counts[rank_]) {
    invalid("reduce_scatterv: recv has " + count_text(r.count) + " but recv_counts[" + std::to_string(rank_) +
            "] (this rank) is " + std::to_string(counts[rank_]));
  }
  ReduceOp reduce = check_op(op, s.dtype);
  ensure_usable();
  return checked({CallKind::reduce_scatterv, 0, dt(s), -1, static_cast<std::int64_t>(reduce), -1, counts_digest(counts)}, bytes_of(s),
                 [&] { return backend_->reduce_scatterv(s, std::move(counts), r, reduce); });
}

RequestPtr Communicator::p2p_group(const std::vector<P2pOp>& group) {
  Use use(*this, "p2p_group");
  if (group.empty()) invalid("a group needs at least one op");
  for (std::size_t i = 0; i < group.size(); ++i) {
    const std::string name = "ops[" + std::to_string(i) + "]";
    check_peer(group[i].peer, name + ".peer");
    if (group[i].tag < 0) invalid(name + ".tag " + std::to_string(group[i].tag) + " is negative");
  }
  ensure_usable();
  std::int64_t elements = 0;
  std::int64_t bytes = 0;
  for (const P2pOp& op : group) {
    elements += op.buf.count;
    bytes += bytes_of(op.buf);
  }
  return logged({OpKind::p2p_group, -1, elements, -1, -1, static_cast<std::int64_t>(group.size()), bytes},
                [&] { return backend_->p2p_group(group); });
}

void Communicator::wait(const RequestPtr& request, int timeout_ms) {
  int limit = timeout_ms < 0 ? timeout_ms_ : timeout_ms;
  // Exchanges of calls are queued only where calls are compared: otherwise
  // a blocking call that is over reads no clock and takes no lock here.
  if (check_calls_) settle_checks(request.get(), Clock::now() + std::chrono::milliseconds(limit));
  // One already over (a backend may run small blocking operations at once)
  // needs no deadline.
  if (!request->done() && !wait_warning(request, Clock::now() + std::chrono::milliseconds(limit))) {
    std::string silent = backend_->unresponsive_ranks(*request);
    fail(DT_ERR_TIMEOUT, timeout_message(rank_prefix() + request->what(), limit, silent));
  }
  dt_status status = request->status();
  if (status != DT_OK) fail(status, request->message());
}

bool Communicator::wait_warning(const RequestPtr& request, Clock::time_point deadline) {
  if (warn_after_s_ == 0) return backend_->wait(request, deadline);
  const auto every = std::chrono::seconds(warn_after_s_);
  const auto start = Clock::now();
  for (auto next = start + every; next < deadline; next += every) {
    if (backend_->wait(request, next)) return true;
    const std::string ranks = backend_->unresponsive_ranks(*request);
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
    DT_LOG(warn) << log_->label() << " " << rank_prefix() << request->what() << " waiting " << waited << " s"
                 << (ranks.empty() ? " (no rank known to be silent)" : " for " + ranks);
  }
  return backend_->wait(request, deadline);
}

dt_status Communicator::test(const RequestPtr& request) {
  // An operation that is done has its exchange done: it was queued first.
  if (check_calls_) settle_checks(nullptr, Clock::now());
  if (!request->done()) return DT_INPROGRESS;
  dt_status status = request->status();
  if (status != DT_OK) fail(status, request->message());
  return DT_OK;
}

std::shared_ptr<Communicator> Communicator::split(int color, int key) {
  Use use(*this, "split");
  if (color < 0 && color != DT_UNDEF) {
    invalid("color " + std::to_string(color) + " is negative (use DT_UNDEF to leave this rank out)");
  }
  ensure_usable();
  int new_rank = -1;
  int new_size = 0;
  auto backend = backend_->split(color, key, &new_rank, &new_size);
  // Every rank splits in the same order, so the n-th split's part of one
  // color has the same label on each of its ranks.
  const std::string child = label() + ".s" + std::to_string(++splits_) + ".k" + std::to_string(color);
  if (!backend) return nullptr;
  return std::make_shared<Communicator>(new_rank, new_size, timeout_ms_, std::move(backend), child);
}

void Communicator::abort() { mark_broken("aborted by dt_comm_abort"); }

void Communicator::close() { mark_broken("the communicator was destroyed", false); }

double sum_over_ranks(Communicator& comm, double local) {
  double value = local;
  const TensorView view = host_view(&value, 1, DType::f64);
  start_and_wait(comm, [&] { return comm.allreduce(view, view, DT_SUM); });
  return value;
}

}  // namespace dtrain::comm
