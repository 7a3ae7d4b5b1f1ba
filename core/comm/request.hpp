// The completion of one operation: set once by whoever finishes it (a backend,
// an abort), awaited by the caller with a deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "dtrain/status.h"

namespace dtrain::comm {

using Clock = std::chrono::steady_clock;

class Request {
 public:
  explicit Request(std::string what) : what_(std::move(what)) {}

  // Finishes the request. The first completion wins; later ones are ignored,
  // so an abort racing a normal completion is harmless. Returns true when this
  // call was the one that finished it.
  bool complete(dt_status status, const std::string& message = {});

  bool done() const;
  // Only meaningful once done().
  dt_status status() const;
  std::string message() const;
  // What the operation is, for messages: "allreduce #12".
  const std::string& what() const { return what_; }

  // Blocks until done or `deadline`; returns done().
  bool wait_until(Clock::time_point deadline) const;

 private:
  const std::string what_;
  mutable std::mutex mutex_;
  mutable std::condition_variable done_cv_;
  bool done_ = false;
  // done_, readable without the lock: callers that drive progress poll it
  // on every round.
  std::atomic<bool> finished_{false};
  dt_status status_ = DT_INPROGRESS;
  std::string message_;
};

using RequestPtr = std::shared_ptr<Request>;

}  // namespace dtrain::comm
