#include "bootstrap/store/limits.hpp"

#include <string>

#include "base/error.hpp"
#include "bootstrap/store/wire.hpp"

namespace dtrain::bootstrap {

std::size_t min_frame_bytes(std::size_t max_key_bytes, std::size_t max_value_bytes) {
  // key, has-expected flag, expected and desired values, each with its field header
  return 4 * wire::kFieldHeaderBytes + max_key_bytes + 1 + 2 * max_value_bytes;
}

void check_store_limits(const StoreLimits& limits) {
  auto positive = [](std::size_t value, const char* name) {
    if (value == 0) raise(DT_ERR_INVALID_ARGUMENT, std::string("StoreLimits.") + name + " is 0");
  };
  positive(limits.max_key_bytes, "max_key_bytes");
  positive(limits.max_value_bytes, "max_value_bytes");
  positive(limits.max_frame_bytes, "max_frame_bytes");
  positive(limits.max_keys, "max_keys");
  positive(limits.max_total_bytes, "max_total_bytes");
  positive(limits.max_connections, "max_connections");
  positive(limits.max_handshakes, "max_handshakes");
  if (limits.handshake_timeout.count() <= 0) {
    raise(DT_ERR_INVALID_ARGUMENT, "StoreLimits.handshake_timeout is not positive");
  }
  if (limits.refusal_log_period.count() <= 0) {
    raise(DT_ERR_INVALID_ARGUMENT, "StoreLimits.refusal_log_period is not positive");
  }
  // Frame lengths travel as 32-bit numbers.
  if (limits.max_frame_bytes > 0xffffffffu || limits.max_value_bytes > 0x7fffffffu ||
      limits.max_key_bytes > 0x7fffffffu) {
    raise(DT_ERR_INVALID_ARGUMENT, "StoreLimits: frame, key and value limits must fit in 32 bits");
  }
  std::size_t needed = min_frame_bytes(limits.max_key_bytes, limits.max_value_bytes);
  if (limits.max_frame_bytes < needed) {
    raise(DT_ERR_INVALID_ARGUMENT, "StoreLimits.max_frame_bytes = " + std::to_string(limits.max_frame_bytes) +
                                       " cannot carry a compare-and-set of the longest key and values; it needs " +
                                       std::to_string(needed));
  }
}

}  // namespace dtrain::bootstrap
