// Deadlines for strategies that wait on several requests in turn: one
// deadline for the whole wait, so that N requests cannot take N timeouts.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>

#include "comm/communicator.hpp"

namespace dtrain::comm {

// `timeout_ms` from now; negative: the communicator's own timeout.
inline Clock::time_point deadline_after(const Communicator& comm, int timeout_ms) {
  return Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? comm.timeout_ms() : timeout_ms);
}

// Waits for `request` through `comm` until `deadline` (DT_ERR_TIMEOUT after,
// which breaks the communicator).
inline void wait_until(Communicator& comm, const RequestPtr& request, Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  comm.wait(request, static_cast<int>(std::clamp<std::int64_t>(left, 0, INT_MAX)));
}

}  // namespace dtrain::comm
