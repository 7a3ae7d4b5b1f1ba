// The rendezvous store's frame format. Plain length-prefixed bytes, so that
// nothing a peer sends is ever interpreted as anything but data.
//
// A frame is a 16-byte header followed by a body of fields:
//
//   offset  size  content
//   0       4     magic "DTst"
//   4       1     protocol version (kVersion)
//   5       1     operation (Op)
//   6       2     reserved, zero
//   8       4     number of fields, little-endian
//   12      4     body length in bytes, little-endian
//   16      ...   the fields, each a 4-byte little-endian length and its bytes
//
// The field lengths must add up to exactly the body length. Integers inside
// fields are little-endian and of fixed width (see encode_u64 and friends).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace dtrain::bootstrap::wire {

inline constexpr char kMagic[4] = {'D', 'T', 's', 't'};
inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kHeaderBytes = 16;
inline constexpr std::size_t kFieldHeaderBytes = 4;

enum class Op : std::uint8_t {
  // client to server
  auth = 1,
  set = 2,
  get = 3,
  add = 4,
  compare_and_set = 5,
  wait = 6,
  remove = 7,
  count = 8,
  // server to client
  challenge = 64,
  welcome = 65,
  reply = 66,
  error = 67,
};

bool is_known_op(std::uint8_t op);
const char* op_name(Op op);

// A parsed frame. The fields point into the buffer given to parse_frame and
// are valid only as long as it is.
struct Frame {
  Op op = Op::error;
  std::vector<std::string_view> fields;
};

enum class ParseStatus {
  complete,    // a whole frame was read
  incomplete,  // the bytes so far are a valid beginning; read more
  invalid,     // the bytes can never become a valid frame
};

struct ParseResult {
  ParseStatus status = ParseStatus::incomplete;
  std::size_t frame_bytes = 0;  // complete: how many bytes the frame took
  std::string error;            // invalid: why
};

// Parses the frame at the start of data[0, size). A pure function of its
// input: it reads nothing outside that range and checks the header (magic,
// version, operation, reserved bits, body length against `max_body`) as soon
// as it is there, so a frame that announces a body longer than `max_body` is
// refused before its body is read.
ParseResult parse_frame(const std::uint8_t* data, std::size_t size, std::size_t max_body, Frame* out);

// The bytes of a frame with these fields. Throws DT_ERR_INVALID_ARGUMENT when
// the body would not fit the 32-bit length.
std::string encode_frame(Op op, const std::vector<std::string_view>& fields);
std::string encode_frame(Op op, std::initializer_list<std::string_view> fields);

// Body bytes that `fields` take in a frame: their lengths plus their headers.
std::size_t body_bytes(const std::vector<std::string_view>& fields);

// Fixed-width little-endian integers as field contents.
std::string encode_u64(std::uint64_t value);
std::string encode_i64(std::int64_t value);
std::string encode_i32(std::int32_t value);
std::string encode_u8(std::uint8_t value);
// False unless `field` has exactly the width of the type.
bool decode_u64(std::string_view field, std::uint64_t* out);
bool decode_i64(std::string_view field, std::int64_t* out);
bool decode_i32(std::string_view field, std::int32_t* out);
bool decode_u8(std::string_view field, std::uint8_t* out);

}  // namespace dtrain::bootstrap::wire
