#include "comm/request.hpp"

#include "comm/op_log.hpp"

namespace dtrain::comm {

bool Request::complete(dt_status status, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_) return false;
    // Recorded before anyone can see the request done, so that what a
    // waiter reads next (the statistics, a flight record) includes it.
    if (log_ != nullptr) log_->end(log_id_, status, algorithm());
    done_ = true;
    status_ = status;
    message_ = message;
    finished_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
  return true;
}

void Request::record_in(OpLog* log, std::uint64_t id) {
  // Most blocking operations are done by now (run at once on the calling
  // thread): no lock needed to see that.
  if (finished_.load(std::memory_order_acquire)) {
    log->end(id, status_, algorithm());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!done_) {
      log_ = log;
      log_id_ = id;
      return;
    }
  }
  log->end(id, status_, algorithm());
}

std::string Request::what() const {
  return kind_ == nullptr ? what_ : std::string(kind_) + " #" + std::to_string(number_);
}

bool Request::done() const { return finished_.load(std::memory_order_acquire); }

dt_status Request::status() const {
  // Once finished, status_ no longer changes: callers checking a completed
  // request need not take the lock.
  if (finished_.load(std::memory_order_acquire)) return status_;
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

std::string Request::message() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return message_;
}

bool Request::wait_until(Clock::time_point deadline) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return done_cv_.wait_until(lock, deadline, [this] { return done_; });
}

std::string timeout_message(const std::string& what, int limit_ms, const std::string& silent) {
  return what + " did not complete within " + std::to_string(limit_ms) + " ms" +
         (silent.empty() ? "" : "; no word from " + silent);
}

}  // namespace dtrain::comm
