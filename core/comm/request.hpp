// The completion of one operation: set once by whoever finishes it (a backend,
// an abort), awaited by the caller with a deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "dtrain/status.h"

namespace dtrain::comm {

class OpLog;

using Clock = std::chrono::steady_clock;

class Request {
 public:
  explicit Request(std::string what) : what_(std::move(what)) {}
  // "kind #number", put together only when a message needs it rather than
  // for every operation (an allocation or two each time). `kind` must
  // outlive the request (a string literal).
  Request(const char* kind, std::uint64_t number) : kind_(kind), number_(number) {}

  // Finishes the request. The first completion wins; later ones are ignored,
  // so an abort racing a normal completion is harmless. Returns true when this
  // call was the one that finished it.
  bool complete(dt_status status, const std::string& message = {});

  // Has `log` record this request's end as operation `id` (OpLog::end), at
  // once when it is done already. `log` must outlive the request's
  // completion: a communicator's log outlives its backend, which completes
  // its requests.
  void record_in(OpLog* log, std::uint64_t id);

  // The algorithm that moves the data (a string literal: "ring", "tree"), for
  // the op log and the trace; set by the backend before it hands the
  // request back. nullptr: not named.
  void set_algorithm(const char* algorithm) { algorithm_.store(algorithm, std::memory_order_release); }
  const char* algorithm() const { return algorithm_.load(std::memory_order_acquire); }

  bool done() const;
  // Only meaningful once done().
  dt_status status() const;
  std::string message() const;
  // What the operation is, for messages: "allreduce #12".
  std::string what() const;

  // Blocks until done or `deadline`; returns done().
  bool wait_until(Clock::time_point deadline) const;

 private:
  const std::string what_;
  const char* const kind_ = nullptr;
  const std::uint64_t number_ = 0;
  mutable std::mutex mutex_;
  mutable std::condition_variable done_cv_;
  bool done_ = false;
  // done_, readable without the lock: callers that drive progress poll it
  // on every round.
  std::atomic<bool> finished_{false};
  std::atomic<const char*> algorithm_{nullptr};
  dt_status status_ = DT_INPROGRESS;
  std::string message_;
  OpLog* log_ = nullptr;  // where to record the end, with log_id_
  std::uint64_t log_id_ = 0;
};

using RequestPtr = std::shared_ptr<Request>;

// Why a wait gave up: "<what> did not complete within <limit_ms> ms", and
// "; no word from <silent>" when the ranks not heard from are known.
std::string timeout_message(const std::string& what, int limit_ms, const std::string& silent);

}  // namespace dtrain::comm
