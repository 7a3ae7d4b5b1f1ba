#include "bootstrap/store/wire.hpp"

#include <limits>

#include "base/error.hpp"

namespace dtrain::bootstrap::wire {

namespace {

std::uint32_t load_u32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void store_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::string fixed_le(std::uint64_t value, int bytes) {
  std::string out(static_cast<std::size_t>(bytes), '\0');
  for (int i = 0; i < bytes; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

bool load_le(std::string_view field, std::size_t bytes, std::uint64_t* out) {
  if (field.size() != bytes) return false;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(field[i])) << (8 * i);
  }
  *out = value;
  return true;
}

ParseResult invalid(std::string why) {
  ParseResult r;
  r.status = ParseStatus::invalid;
  r.error = std::move(why);
  return r;
}

}  // namespace

bool is_known_op(std::uint8_t op) {
  return (op >= static_cast<std::uint8_t>(Op::auth) && op <= static_cast<std::uint8_t>(Op::count)) ||
         (op >= static_cast<std::uint8_t>(Op::challenge) && op <= static_cast<std::uint8_t>(Op::error));
}

const char* op_name(Op op) {
  switch (op) {
    case Op::auth: return "auth";
    case Op::set: return "set";
    case Op::get: return "get";
    case Op::add: return "add";
    case Op::compare_and_set: return "compare_and_set";
    case Op::wait: return "wait";
    case Op::remove: return "remove";
    case Op::count: return "count";
    case Op::challenge: return "challenge";
    case Op::welcome: return "welcome";
    case Op::reply: return "reply";
    case Op::error: return "error";
  }
  return "unknown";
}

ParseResult parse_frame(const std::uint8_t* data, std::size_t size, std::size_t max_body, Frame* out) {
  // Check each header byte as soon as it has arrived, so that a peer speaking
  // another protocol is refused on its first bytes.
  for (std::size_t i = 0; i < sizeof kMagic && i < size; ++i) {
    if (data[i] != static_cast<std::uint8_t>(kMagic[i])) return invalid("not a dtrain store frame (bad magic)");
  }
  if (size > 4 && data[4] != kVersion) {
    return invalid("protocol version " + std::to_string(data[4]) + " is not supported (this side speaks version " +
                   std::to_string(kVersion) + ")");
  }
  if (size > 5 && !is_known_op(data[5])) return invalid("unknown operation " + std::to_string(data[5]));
  if (size > 6 && data[6] != 0) return invalid("reserved header bits are set");
  if (size > 7 && data[7] != 0) return invalid("reserved header bits are set");
  if (size < kHeaderBytes) return ParseResult{};

  const std::uint32_t nfields = load_u32(data + 8);
  const std::uint32_t body = load_u32(data + 12);
  if (body > max_body) {
    return invalid("frame body of " + std::to_string(body) + " bytes exceeds the limit of " +
                   std::to_string(max_body) + " bytes");
  }
  if (nfields > body / kFieldHeaderBytes) {
    return invalid(std::to_string(nfields) + " fields cannot fit in a body of " + std::to_string(body) + " bytes");
  }
  if (size - kHeaderBytes < body) return ParseResult{};

  const std::uint8_t* p = data + kHeaderBytes;
  std::size_t left = body;
  Frame frame;
  frame.op = static_cast<Op>(data[5]);
  frame.fields.reserve(nfields);
  for (std::uint32_t i = 0; i < nfields; ++i) {
    if (left < kFieldHeaderBytes) return invalid("field " + std::to_string(i) + " overruns the body");
    const std::uint32_t length = load_u32(p);
    p += kFieldHeaderBytes;
    left -= kFieldHeaderBytes;
    if (length > left) return invalid("field " + std::to_string(i) + " overruns the body");
    frame.fields.emplace_back(reinterpret_cast<const char*>(p), length);
    p += length;
    left -= length;
  }
  if (left != 0) return invalid(std::to_string(left) + " bytes in the body after the last field");

  if (out != nullptr) *out = std::move(frame);
  ParseResult r;
  r.status = ParseStatus::complete;
  r.frame_bytes = kHeaderBytes + body;
  return r;
}

std::size_t body_bytes(const std::vector<std::string_view>& fields) {
  std::size_t total = 0;
  for (std::string_view f : fields) total += kFieldHeaderBytes + f.size();
  return total;
}

std::string encode_frame(Op op, const std::vector<std::string_view>& fields) {
  const std::size_t body = body_bytes(fields);
  if (body > std::numeric_limits<std::uint32_t>::max()) {
    raise(DT_ERR_INVALID_ARGUMENT, "a store frame of " + std::to_string(body) + " bytes is too large to encode");
  }
  std::string out;
  out.reserve(kHeaderBytes + body);
  out.append(kMagic, sizeof kMagic);
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(op));
  out.push_back('\0');
  out.push_back('\0');
  store_u32(out, static_cast<std::uint32_t>(fields.size()));
  store_u32(out, static_cast<std::uint32_t>(body));
  for (std::string_view f : fields) {
    store_u32(out, static_cast<std::uint32_t>(f.size()));
    out.append(f.data(), f.size());
  }
  return out;
}

std::string encode_frame(Op op, std::initializer_list<std::string_view> fields) {
  return encode_frame(op, std::vector<std::string_view>(fields));
}

std::string encode_u64(std::uint64_t value) { return fixed_le(value, 8); }
std::string encode_i64(std::int64_t value) { return fixed_le(static_cast<std::uint64_t>(value), 8); }
std::string encode_i32(std::int32_t value) {
  return fixed_le(static_cast<std::uint64_t>(static_cast<std::uint32_t>(value)), 4);
}
std::string encode_u8(std::uint8_t value) { return fixed_le(value, 1); }

bool decode_u64(std::string_view field, std::uint64_t* out) { return load_le(field, 8, out); }

bool decode_i64(std::string_view field, std::int64_t* out) {
  std::uint64_t v = 0;
  if (!load_le(field, 8, &v)) return false;
  *out = static_cast<std::int64_t>(v);
  return true;
}

bool decode_i32(std::string_view field, std::int32_t* out) {
  std::uint64_t v = 0;
  if (!load_le(field, 4, &v)) return false;
  *out = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  return true;
}

bool decode_u8(std::string_view field, std::uint8_t* out) {
  std::uint64_t v = 0;
  if (!load_le(field, 1, &v)) return false;
  *out = static_cast<std::uint8_t>(v);
  return true;
}

}  // namespace dtrain::bootstrap::wire
