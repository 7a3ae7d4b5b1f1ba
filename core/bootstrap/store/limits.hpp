// What a rendezvous store accepts. A client learns the key, value and frame
// limits when it connects and refuses oversized requests itself, with a
// message naming the limit; the server drops a client that sends one anyway.
#pragma once

#include <chrono>
#include <cstddef>

namespace dtrain::bootstrap {

struct StoreLimits {
  std::size_t max_key_bytes = 4096;
  std::size_t max_value_bytes = std::size_t{1} << 20;
  // Largest frame body either side sends. Must hold a compare-and-set of a
  // longest key with two longest values (see check_store_limits).
  std::size_t max_frame_bytes = std::size_t{4} << 20;
  std::size_t max_keys = 1000000;
  // Keys plus values held at once.
  std::size_t max_total_bytes = std::size_t{512} << 20;
  // Open connections, authenticated or not; a connection beyond it is refused.
  std::size_t max_connections = 1024;
  // How long a new connection may take to authenticate before it is dropped,
  // so that silent connections do not hold slots.
  std::chrono::milliseconds handshake_timeout{10000};
};

// Frame body a compare-and-set with a longest key and two longest values needs.
std::size_t min_frame_bytes(std::size_t max_key_bytes, std::size_t max_value_bytes);

// Throws DT_ERR_INVALID_ARGUMENT naming the field when a limit is zero or the
// frame limit cannot carry the largest request.
void check_store_limits(const StoreLimits& limits);

}  // namespace dtrain::bootstrap
