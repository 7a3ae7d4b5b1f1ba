// A communicator: a group of ranks, its deadline, and the backend that moves
// its data. It checks every argument against the contract before the backend
// sees it, compares each collective's call across the ranks (call_check.hpp),
// and it owns the "broken" state: once an operation fails with a
// timeout, a remote or transport error, or an abort, every later call fails
// with DT_ERR_ABORTED and says why.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/backend.hpp"
#include "comm/call_check.hpp"
#include "comm/op_log.hpp"
#include "dtrain/comm.h"

namespace dtrain::comm {

class Communicator {
 public:
  // `label` names the communicator alike on every rank, for the flight
  // recorder and the trace (flight_recorder.hpp).
  Communicator(int rank, int size, int timeout_ms, std::unique_ptr<Backend> backend, std::string label = "c0");
  ~Communicator();

  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int timeout_ms() const { return timeout_ms_; }
  const char* backend_name() const { return backend_->name(); }
  const std::string& label() const { return log_->label(); }
  // Every operation's start and end (op_log.hpp).
  const OpLog& op_log() const { return *log_; }

  // Each operation checks its arguments (throwing DT_ERR_INVALID_ARGUMENT and
  // starting nothing), then starts and returns the operation. Reduction ops
  // arrive as the raw int of a dt_reduce_op (see base/enum_value.hpp).
  // Tensors are checked views (a view the C API parsed, or of a tensor the
  // caller made: host memory, or a device Queue's); a CUDA view's `stream`
  // is the cudaStream_t its operation is ordered on (comm.h), and host
  // backends ignore it. Here the views are checked against each other and
  // against the communicator: dtypes, counts, roots, peers and tags. Off the
  // root, reduce's and gather's recv and scatter's send are not looked at.
  RequestPtr allreduce(const TensorView& send, const TensorView& recv, int op);
  RequestPtr reduce_scatter(const TensorView& send, const TensorView& recv, int op);
  RequestPtr allgather(const TensorView& send, const TensorView& recv);
  RequestPtr broadcast(const TensorView& buf, int root);
  RequestPtr alltoall(const TensorView& send, const TensorView& recv);
  RequestPtr alltoallv(const TensorView& send, const std::int64_t* send_counts, const TensorView& recv,
                       const std::int64_t* recv_counts);
  RequestPtr send(const TensorView& buf, int peer, int tag);
  RequestPtr recv(const TensorView& buf, int peer, int tag);
  RequestPtr barrier();
  RequestPtr reduce(const TensorView& send, const TensorView& recv, int op, int root);
  RequestPtr gather(const TensorView& send, const TensorView& recv, int root);
  RequestPtr scatter(const TensorView& send, const TensorView& recv, int root);
  RequestPtr allgatherv(const TensorView& send, const TensorView& recv, const std::int64_t* recv_counts);
  RequestPtr reduce_scatterv(const TensorView& send, const std::int64_t* recv_counts, const TensorView& recv, int op);
  // Every op checked (a peer of this communicator, a tag that is not
  // negative; "ops[i]" in messages) before any starts; one request for the
  // group, which needs at least one op.
  RequestPtr p2p_group(const std::vector<P2pOp>& ops);

  // The thread whose calls through the C API may run this communicator's
  // operations (comm.h, "Threads"): the thread that constructed it until
  // bind_thread() says otherwise. bind_thread(true) makes it the calling
  // thread; bind_thread(false) lets any thread call, one at a time.
  void bind_thread(bool bind);
  // Throws DT_ERR_INVALID_USAGE, naming the call `what` (and the one the
  // bound thread is in, if any), when the calling thread is not the bound
  // one; changes nothing. Strategies built on the communicator (DDP, ZeRO,
  // ...) order their own operations and do not ask.
  void check_thread(const char* what);

  // Throws, naming `name`, what an operation would refuse about where
  // `view`'s memory is (a CUDA tensor on a device this communicator does not
  // use, or with no device at all); sends nothing.
  void check_placement(const TensorView& view, const char* name) const { backend_->check_placement(view, name); }

  // Waits for `request` at most `timeout_ms` (negative: this communicator's
  // deadline). Throws the operation's error, or DT_ERR_TIMEOUT; either breaks
  // the communicator when the contract says so.
  void wait(const RequestPtr& request, int timeout_ms);
  // Whether the calling thread waits at once for the next operation it
  // starts (see Backend::expect_wait).
  void expect_wait(bool on);
  // DT_OK, DT_INPROGRESS, or throws the operation's error.
  dt_status test(const RequestPtr& request);

  // Marks the calling thread as using the communicator while it lives (an
  // operation's start, or a blocking call's start and wait; nested uses of
  // one thread are one). A second thread that comes meanwhile gets
  // DT_ERR_INVALID_USAGE naming both calls, and the communicator breaks:
  // the two threads' operations may already be in different orders on
  // different ranks, which would pair the wrong buffers.
  class Use {
   public:
    // `what` is a string literal naming the call; nullptr (a blocking call
    // around an operation) keeps the name of the operation inside, and
    // leaves a refusal to it.
    Use(Communicator& comm, const char* what);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    Communicator& comm_;
    bool owns_ = false;
  };

  // Copies straight between the ranks' host memories (peer_memory.hpp),
  // where every rank runs on this host and may read and write the others'
  // memory, as the ranks agreed when the communicator was made (the same
  // answer on every rank); nullptr elsewhere.
  const PeerMemory* peer_memory() const { return backend_->peer_memory(); }

  // A communicator of the ranks sharing `color`; nullptr for DT_UNDEF.
  std::shared_ptr<Communicator> split(int color, int key);

  // Marks the communicator broken and aborts every pending operation.
  // Never blocks; safe from any thread.
  void abort();
  // What dt_comm_destroy does: like abort(), but pending waiters are told the
  // communicator was destroyed.
  void close();

 private:
  void ensure_usable() const;
  void check_root(int root) const;
  void check_peer(int peer, const std::string& name) const;
  // A collective's call compared with every rank's (call_check.hpp): an
  // exchange of the calls queued just before the operation start() starts,
  // looked at before the operation starts when the caller waits at once,
  // otherwise before anyone learns how the operation ended.
  struct PendingCheck {
    RequestPtr exchange;
    std::shared_ptr<std::vector<std::int64_t>> calls;  // every rank's, by rank
    const Request* operation = nullptr;                // for identity only
  };
  // Records the operation that `start` starts in the op log, its end
  // included, even when starting it throws.
  template <typename Start>
  RequestPtr logged(const OpStart& op, Start&& start);
  // A collective: logged, with `bytes` of this rank's buffer, and compared.
  template <typename Start>
  RequestPtr checked(Call call, std::int64_t bytes, Start&& start);
  template <typename Start>
  RequestPtr compared(Call call, Start&& start);
  // Looks at the exchanges done, in order, up to that of `until`'s
  // operation, waiting until `deadline` for those before it; without
  // `until` (or for an operation without one), only at those done.
  void settle_checks(const Request* until, Clock::time_point deadline);
  // Waits for an exchange of calls; DT_ERR_TIMEOUT (breaking) at `deadline`.
  void wait_for(const RequestPtr& exchange, Clock::time_point deadline);
  // Ranks that disagree: throws DT_ERR_MISMATCH naming each rank's call,
  // breaking the communicator when the operation was `started` already.
  void verify(const PendingCheck& check, bool started);
  // Records why the communicator broke (the first reason wins) and, with
  // `dump`, writes the flight record (flight_recorder.hpp).
  void mark_broken(const std::string& reason, bool dump = true);
  // Notes `reason` in the op log and writes the flight record.
  void record_failure(const std::string& reason);
  // Blocks on `request` until `deadline`, warning every
  // DTRAIN_WAIT_WARN_S seconds which ranks it still waits for.
  bool wait_warning(const RequestPtr& request, Clock::time_point deadline);
  [[noreturn]] void fail(dt_status status, const std::string& message);
  std::string rank_prefix() const;

  const int rank_;
  const int size_;
  const int timeout_ms_;
  const bool check_calls_;
  const int warn_after_s_;        // DTRAIN_WAIT_WARN_S; 0: never
  std::int64_t collectives_ = 0;  // calls compared so far
  int splits_ = 0;                // for children's labels
  // Before the backend, which completes requests into it.
  const std::unique_ptr<OpLog> log_;
  // Before the backend, which is destroyed first and so ends the exchanges
  // that write into them.
  // The bound thread; a default id: none, any thread may call.
  std::atomic<std::thread::id> bound_thread_{std::this_thread::get_id()};
  // The thread inside (a default id: none), taken and given back with one
  // atomic operation each, as every call does.
  std::atomic<std::thread::id> user_{};
  int depth_ = 0;                            // its nested uses; the user's alone
  std::atomic<const char*> in_use_{nullptr};  // the call it is in, for the refusal's message
  std::mutex checks_mutex_;
  std::deque<PendingCheck> checks_;
  std::unique_ptr<Backend> backend_;
  std::atomic<bool> broken_{false};
  mutable std::mutex broken_mutex_;
  std::string broken_reason_;
};

// Tells `comm` that the operation started in this scope is waited for at
// once (Communicator::expect_wait). The hint must not outlive the start, even
// one that throws: a later non-blocking call would be taken for a blocking one.
class WaitHint {
 public:
  explicit WaitHint(Communicator& comm) : comm_(comm) { comm_.expect_wait(true); }
  ~WaitHint() { comm_.expect_wait(false); }
  WaitHint(const WaitHint&) = delete;
  WaitHint& operator=(const WaitHint&) = delete;

 private:
  Communicator& comm_;
};

// A blocking operation: starts it (`start()` returns its request) with the
// hint, so that the backend may spare the hand-off or run it then and there,
// and waits for it with the communicator's deadline.
template <typename Start>
void start_and_wait(Communicator& comm, Start&& start) {
  Communicator::Use use(comm, nullptr);
  RequestPtr request;
  {
    WaitHint hint(comm);
    request = start();
  }
  comm.wait(request, -1);
}

// The sum of `local` over the ranks of `comm` (a blocking f64 allreduce).
double sum_over_ranks(Communicator& comm, double local);

}  // namespace dtrain::comm
