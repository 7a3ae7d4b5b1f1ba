// What the frames of the store protocol carry (wire.hpp has the framing).
//
// Connection: the server sends `challenge` [nonce]; the client answers `auth`
// [client nonce, client proof]; the server answers `welcome` [server proof,
// max key bytes u64, max value bytes u64, max frame bytes u64], or `error` and
// closes. A server whose slots for authenticated clients are all taken sends
// `error` [DT_ERR_OUT_OF_MEMORY, message] instead of `challenge` (or instead
// of `welcome`, when others authenticated first), and a client retries it.
// See auth.hpp for the proofs.
//
// Requests (client to server) and their `reply` fields:
//   set     [key, value]                                -> []
//   get     [key...]                                    -> [present bytes, value...]
//           One present byte (0 or 1) per answered key and one value field per
//           answered key (empty when absent). The server answers the first m
//           keys, m >= 1, as many as fit in a frame; the client asks again for
//           the rest.
//   add     [key, delta i64]                            -> [new value i64]
//           The value is kept as decimal text; a missing key counts from 0.
//   compare_and_set [key, has_expected u8, expected, desired]
//                                                       -> [swapped u8, present u8, value]
//           Swaps when the key holds `expected`, or is absent when
//           has_expected is 0; answers with what the key holds afterwards.
//   wait    [timeout_ms u64, key...]                    -> [missing key...]
//           Answers once every key is present or has been set since the wait
//           began, or when the timeout passes, listing the keys still missing.
//   remove  [key...]                                    -> [number removed u64]
//   count   []                                          -> [number of keys u64]
// Any request may instead get `error` [status i32, message]: the request was
// refused (a full store, a value that is not a counter) and the connection
// stays usable. A frame that breaks these rules gets `error` and the
// connection is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap/store/wire.hpp"

namespace dtrain::bootstrap::wire {

// A frame body large enough for any handshake frame.
inline constexpr std::size_t kMaxHandshakeBody = 256;

// A frame that breaks the protocol: the connection that sent it is closed.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KeyLimits {
  std::size_t max_key_bytes = 0;
  std::size_t max_value_bytes = 0;
};

// A request, with views into the frame's buffer.
struct Request {
  Op op = Op::count;
  std::vector<std::string_view> keys;  // one for set/add/compare_and_set; one or more for get/wait/remove
  std::string_view value;              // set: the value; compare_and_set: the desired value
  bool has_expected = false;           // compare_and_set
  std::string_view expected;           // compare_and_set, when has_expected
  std::int64_t delta = 0;              // add
  std::uint64_t timeout_ms = 0;        // wait
};

// Checks the shape of a request frame (field counts and widths, keys that are
// empty or longer than the limit, values longer than the limit). Throws
// ProtocolError saying what is wrong. `auth` and server-side operations are
// not requests.
Request decode_request(const Frame& frame, const KeyLimits& limits);

// The frame of `request`, as decode_request reads it.
std::string encode_request(const Request& request);

struct AuthAnswer {
  std::string_view client_nonce;
  std::string_view proof;
};
AuthAnswer decode_auth(const Frame& frame);

struct Welcome {
  std::string_view proof;
  std::uint64_t max_key_bytes = 0;
  std::uint64_t max_value_bytes = 0;
  std::uint64_t max_frame_bytes = 0;
};
Welcome decode_welcome(const Frame& frame);

// `error` frames. decode_error throws ProtocolError unless the frame has a
// status that is a dt_status error and a message.
std::string encode_error(int status, std::string_view message);
struct ErrorReply {
  int status = 0;
  std::string_view message;
};
ErrorReply decode_error(const Frame& frame);

}  // namespace dtrain::bootstrap::wire
