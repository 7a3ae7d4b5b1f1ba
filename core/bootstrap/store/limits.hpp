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
  // Clients that have authenticated, served at once. A connection that comes
  // while this many are served is refused before its handshake (an `error`
  // frame with DT_ERR_OUT_OF_MEMORY, "the store is full"), and so is one
  // whose handshake completes then; clients retry such a refusal with backoff
  // until their deadline. Connections that have not authenticated never
  // count here, so a process without the token cannot take these slots.
  std::size_t max_connections = 1024;
  // Connections still in their handshake, held at once: their own budget,
  // apart from max_connections. When a new connection comes while this many
  // are held, the oldest of them is dropped to make room, so a flood of
  // silent connections can only ever push out other silent connections and a
  // client that answers its challenge promptly gets through. The server also
  // drops the oldest when the process runs out of descriptors.
  std::size_t max_handshakes = 256;
  // How long a new connection may take to authenticate before it is dropped,
  // so that silent connections do not hold slots.
  std::chrono::milliseconds handshake_timeout{10000};
  // Refused and dropped connections are not logged one line each: the first
  // of each kind is a WARN line, the rest are counted and summarised in one
  // line per period ("refused or dropped N more connections in the last T s").
  std::chrono::milliseconds refusal_log_period{10000};
};

// Frame body a compare-and-set with a longest key and two longest values needs.
std::size_t min_frame_bytes(std::size_t max_key_bytes, std::size_t max_value_bytes);

// Throws DT_ERR_INVALID_ARGUMENT naming the field when a limit is zero or the
// frame limit cannot carry the largest request.
void check_store_limits(const StoreLimits& limits);

}  // namespace dtrain::bootstrap
