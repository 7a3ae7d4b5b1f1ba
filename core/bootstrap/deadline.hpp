// A point in time after which a wait gives up. Every blocking step of the
// bootstrap code (connecting, reading a reply, waiting for keys) is bounded by
// one, so nothing can hang.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>

namespace dtrain::bootstrap {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(Clock::time_point when) : when_(when) {}

  // `timeout` from now; negative timeouts are already expired. Timeouts
  // beyond a year are cut to a year, so that the sum cannot overflow.
  static Deadline after(std::chrono::milliseconds timeout) {
    constexpr std::chrono::milliseconds kLongest = std::chrono::hours(24 * 365);
    return Deadline(Clock::now() + std::min(timeout, kLongest));
  }

  Clock::time_point when() const { return when_; }
  bool expired() const { return Clock::now() >= when_; }

  // What is left, never negative, rounded up so that a wait of the returned
  // length does not wake just before the deadline.
  std::chrono::milliseconds remaining() const {
    auto left = when_ - Clock::now();
    if (left <= Clock::duration::zero()) return std::chrono::milliseconds(0);
    return std::chrono::ceil<std::chrono::milliseconds>(left);
  }

  // remaining() as a poll(2) timeout.
  int poll_timeout_ms() const {
    auto ms = remaining().count();
    return static_cast<int>(std::min<long long>(ms, INT_MAX));
  }

  // The earlier of the two.
  Deadline min(const Deadline& other) const { return Deadline(std::min(when_, other.when_)); }

 private:
  Clock::time_point when_;
};

}  // namespace dtrain::bootstrap
