// An operation in flight: its request, the transfers it posted, and the
// coroutines ("lanes") that run its schedule. A lane is written like
// straight-line MPI code — post sends and receives, co_await them, reduce —
// and the compiler turns it into the per-operation state machine. The engine
// resumes a lane once everything it awaits has completed.
//
// A pipelined algorithm runs many lanes (one per chunk), at most `window` at
// a time and started in order: lane i starts only after lane i - window has
// finished, so a lane may reuse the buffers of that slot (i % window).
#pragma once

#include <array>
#include <concepts>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/request.hpp"
#include "comm/schedules/messages.hpp"

namespace dtrain::comm::schedule {

// How pipelined schedules cut a message: chunks of `chunk_bytes`, at most
// `depth` of them in flight per operation.
struct Pipelining {
  std::size_t chunk_bytes = 128 * 1024;
  int depth = 4;
};

// What an operation needs to know about its communicator.
struct Group {
  Messages* messages = nullptr;
  int rank = 0;
  int size = 1;
  std::uint32_t context = 0;
  const std::vector<int>* world_ranks = nullptr;  // world rank of each rank, for messages
  Pipelining pipelining;
};

// "rank 3" or, in a sub-communicator, "rank 3 (world rank 7)".
std::string describe_rank(const Group& group, int rank);

// What a transfer that completed with an error means for its operation:
// the status to fail it with and why, for messages.
std::pair<dt_status, std::string> transfer_error(const Group& group, const Transfer& transfer);

// What a suspended lane waits for: a readiness test over an awaiter that
// lives in the lane's frame while it is suspended.
struct Awaiting {
  bool (*ready)(const void* awaiter) = nullptr;
  const void* awaiter = nullptr;
};

class Task {
 public:
  struct promise_type {
    Awaiting awaiting;
    std::exception_ptr error;

    Task get_return_object() noexcept { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }

    // Frames come from a one-frame cache per thread: a small operation
    // starts one lane, and its frame is the same size as the last one's.
    static void* operator new(std::size_t bytes);
    static void operator delete(void* frame, std::size_t bytes) noexcept;
  };

  Task() = default;
  explicit Task(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  ~Task() { reset(); }

  bool empty() const { return !handle_; }
  bool finished() const { return handle_ && handle_.done(); }
  // Resumes the lane if what it awaits is ready (or it has not started);
  // returns whether it ran. Rethrows what the lane threw.
  bool step();
  void reset();

 private:
  std::coroutine_handle<promise_type> handle_;
};

// co_await all_of(a, b, ...): resumes once none of the transfers is pending.
template <std::size_t N>
struct AllOf {
  Transfer* transfers[N];

  static bool ready(const void* self) {
    for (const Transfer* t : static_cast<const AllOf*>(self)->transfers) {
      if (t->pending()) return false;
    }
    return true;
  }
  // A failed transfer suspends the lane even when nothing is pending, so the
  // operation fails before the lane touches what did not arrive.
  bool await_ready() const noexcept {
    for (const Transfer* t : transfers) {
      if (!t->ok()) return false;
    }
    return true;
  }
  void await_suspend(std::coroutine_handle<Task::promise_type> handle) noexcept {
    handle.promise().awaiting = {&AllOf::ready, this};
  }
  void await_resume() const noexcept {}
};

template <typename... T>
  requires(std::same_as<T, Transfer> && ...)
AllOf<sizeof...(T)> all_of(T&... transfers) {
  return AllOf<sizeof...(T)>{{&transfers...}};
}

// co_await all_of(list): the same for a run-time list.
struct AllOfList {
  const std::vector<Transfer*>* transfers;

  static bool ready(const void* self) {
    for (const Transfer* t : *static_cast<const AllOfList*>(self)->transfers) {
      if (t->pending()) return false;
    }
    return true;
  }
  bool await_ready() const noexcept {
    for (const Transfer* t : *transfers) {
      if (!t->ok()) return false;
    }
    return true;
  }
  void await_suspend(std::coroutine_handle<Task::promise_type> handle) noexcept {
    handle.promise().awaiting = {&AllOfList::ready, this};
  }
  void await_resume() const noexcept {}
};

inline AllOfList all_of(const std::vector<Transfer*>& transfers) { return AllOfList{&transfers}; }

class Operation : public Transfer::Owner {
 public:
  enum class Kind { collective, point_to_point };

  // `name` is a string literal: requests refer to it after the operation is gone.
  Operation(const char* name, Kind kind);
  virtual ~Operation();

  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  Kind kind() const { return kind_; }
  const char* name() const { return name_; }
  const RequestPtr& request() const { return request_; }
  // "rank 0: allreduce #12", to start messages with.
  std::string prefix() const;

  // Called by the engine, in this order: label it, bind it to the
  // communicator, start it, then advance() it until it is over.
  void set_label(std::uint64_t number, std::uint64_t sequence);
  void bind(const Group& group) { group_ = group; }
  void start();
  // Resumes lanes whose transfers have completed, starts further lanes and
  // completes the request once every lane has finished. Returns whether
  // anything happened.
  bool advance();
  // Ends the operation with an error: completes its request, stops its lanes
  // and cancels its pending receives. Its pending sends are left to the
  // engine (only closing their endpoint ends them). Returns whether this
  // completed the request (it may have been completed early, or failed).
  bool fail(dt_status status, const std::string& message);

  bool started() const { return started_; }
  // Finished (every lane done) or failed: the engine lets go of it.
  bool over() const { return done_ || failed_; }
  bool failed() const { return failed_; }
  // No transfer of it is in flight: it may be destroyed.
  bool quiescent() const;
  // Peers whose messages it still waits for, then peers it is still sending to.
  virtual std::vector<int> waiting_on() const;
  // Whether it still waits on `peer`: a transfer with it in flight.
  virtual bool involves(int peer) const;
  // It completes without any event from the worker (through shared memory):
  // whoever drives it must poll rather than sleep on the worker's events.
  virtual bool polled() const { return false; }
  // Peers with sends in flight (to be force-closed when aborting).
  std::vector<int> sending_to() const;

  void transfer_failed(const Transfer& transfer) override;

  // Keeps `owner` alive as long as the operation: buffers that no caller
  // owns (those of an internal exchange, which may outlive its caller's wait).
  void keep_alive(std::shared_ptr<const void> owner) { kept_.push_back(std::move(owner)); }

 protected:
  // The schedule. lane_count() is fixed once start() is called.
  virtual int lane_count() const { return 1; }
  virtual int window() const { return 1; }
  // Local work before any lane runs (copies into the output, allocations).
  virtual void prepare() {}
  virtual Task lane(int index, int slot) = 0;
  // Local work after every lane has finished (averaging, rotation).
  virtual void finish() {}

  const Group& group() const { return group_; }
  int rank() const { return group_.rank; }
  int size() const { return group_.size; }
  // The operation's number among the communicator's collectives.
  std::uint64_t sequence() const { return sequence_; }

  // A transfer owned by the operation, stable until it is destroyed.
  Transfer& transfer();
  // Collective messages, tagged with the operation's sequence number and `step`.
  void send(Transfer& transfer, int peer, std::uint32_t step, const void* data, std::size_t bytes);
  void recv(Transfer& transfer, int peer, std::uint32_t step, void* data, std::size_t bytes);
  // Messages with a tag of the caller's choosing.
  void send_tagged(Transfer& transfer, int peer, Tag tag, const void* data, std::size_t bytes);
  void recv_tagged(Transfer& transfer, int peer, Tag tag, void* data, std::size_t bytes);

  // Completes the request early; the operation keeps running until its
  // transfers are done (a send to oneself that owns its copy of the data).
  void complete_early() { request_->complete(DT_OK); }

 private:
  void fail_from(const Transfer& transfer);
  // Calls `f` on every transfer created so far.
  template <typename Self, typename F>
  static void each_transfer(Self& self, F&& f) {
    for (std::size_t i = 0; i < self.inline_used_; ++i) f(self.inline_transfers_[i]);
    if (self.more_transfers_) {
      for (auto& t : *self.more_transfers_) f(t);
    }
  }

  const char* const name_;
  const Kind kind_;
  RequestPtr request_;
  Group group_;
  std::uint64_t sequence_ = 0;
  bool started_ = false;
  bool done_ = false;
  bool failed_ = false;
  int next_lane_ = 0;
  int lanes_ = 0;
  std::vector<Task> slots_;
  // The first few transfers live in the operation itself, the rest in a
  // deque made on demand: latency-bound schedules need two, and a deque
  // allocates even while empty.
  static constexpr std::size_t kInlineTransfers = 4;
  std::array<Transfer, kInlineTransfers> inline_transfers_;
  std::size_t inline_used_ = 0;
  std::unique_ptr<std::deque<Transfer>> more_transfers_;
  const Transfer* first_failure_ = nullptr;
  std::vector<std::shared_ptr<const void>> kept_;
};

}  // namespace dtrain::comm::schedule
