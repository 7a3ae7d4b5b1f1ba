#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bootstrap/store/limits.hpp"
#include "bootstrap/store/protocol.hpp"
#include "bootstrap/store/wire.hpp"

namespace dtrain::bootstrap::wire {
namespace {

ParseResult parse(const std::string& bytes, Frame* frame, std::size_t max_body = 1 << 20) {
  return parse_frame(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), max_body, frame);
}

std::string header(std::uint8_t version, std::uint8_t op, std::uint32_t nfields, std::uint32_t body) {
  std::string h = "DTst";
  h.push_back(static_cast<char>(version));
  h.push_back(static_cast<char>(op));
  h.append(2, '\0');
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(nfields >> (8 * i)));
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(body >> (8 * i)));
  return h;
}

const KeyLimits kLimits{64, 256};

TEST(StoreWire, EncodeThenParseGivesTheFields) {
  std::string value("\0binary\xff", 8);
  std::string bytes = encode_frame(Op::set, {"key", value});
  Frame frame;
  ParseResult r = parse(bytes, &frame);
  ASSERT_EQ(r.status, ParseStatus::complete) << r.error;
  EXPECT_EQ(r.frame_bytes, bytes.size());
  EXPECT_EQ(frame.op, Op::set);
  ASSERT_EQ(frame.fields.size(), 2u);
  EXPECT_EQ(frame.fields[0], "key");
  EXPECT_EQ(frame.fields[1], value);
}

TEST(StoreWire, EveryPrefixIsIncompleteAndTrailingBytesAreLeft) {
  std::string bytes = encode_frame(Op::get, {"a", "bb", ""});
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    Frame frame;
    EXPECT_EQ(parse(bytes.substr(0, n), &frame).status, ParseStatus::incomplete) << n;
  }
  Frame frame;
  ParseResult r = parse(bytes + "more", &frame);
  ASSERT_EQ(r.status, ParseStatus::complete);
  EXPECT_EQ(r.frame_bytes, bytes.size());
  EXPECT_EQ(frame.fields.size(), 3u);
}

TEST(StoreWire, BadMagicIsRefusedOnTheFirstByte) {
  Frame frame;
  ParseResult r = parse("G", &frame);
  EXPECT_EQ(r.status, ParseStatus::invalid);
  EXPECT_NE(r.error.find("magic"), std::string::npos);
  EXPECT_EQ(parse("GET / HTTP/1.1\r\n\r\n", &frame).status, ParseStatus::invalid);
}

TEST(StoreWire, VersionOpAndReservedBitsAreChecked) {
  Frame frame;
  ParseResult r = parse(header(2, 2, 0, 0), &frame);
  EXPECT_EQ(r.status, ParseStatus::invalid);
  EXPECT_NE(r.error.find("version 2"), std::string::npos) << r.error;
  EXPECT_EQ(parse(header(1, 0, 0, 0), &frame).status, ParseStatus::invalid);
  EXPECT_EQ(parse(header(1, 200, 0, 0), &frame).status, ParseStatus::invalid);
  std::string reserved = header(1, 8, 0, 0);
  reserved[6] = 1;
  EXPECT_EQ(parse(reserved, &frame).status, ParseStatus::invalid);
  EXPECT_EQ(parse(header(1, 8, 0, 0), &frame).status, ParseStatus::complete);
}

TEST(StoreWire, OversizedBodyIsRefusedFromTheHeaderAlone) {
  Frame frame;
  ParseResult r = parse(header(1, 2, 2, 100u << 20), &frame, 1 << 20);
  EXPECT_EQ(r.status, ParseStatus::invalid);
  EXPECT_NE(r.error.find("exceeds the limit"), std::string::npos) << r.error;
}

TEST(StoreWire, FieldsMustAddUpToTheBody) {
  Frame frame;
  // More fields than the body could hold.
  EXPECT_EQ(parse(header(1, 2, 3, 8) + std::string(8, '\0'), &frame).status, ParseStatus::invalid);
  // A field longer than what is left.
  std::string overrun = header(1, 2, 1, 6) + std::string("\x09\0\0\0ab", 6);
  EXPECT_EQ(parse(overrun, &frame).status, ParseStatus::invalid);
  // Bytes after the last field.
  std::string trailing = header(1, 2, 1, 7) + std::string("\x02\0\0\0abc", 7);
  EXPECT_EQ(parse(trailing, &frame).status, ParseStatus::invalid);
  // A field length near 2^32 must not wrap around.
  std::string huge = header(1, 2, 1, 8) + std::string("\xff\xff\xff\xff\0\0\0\0", 8);
  EXPECT_EQ(parse(huge, &frame).status, ParseStatus::invalid);
}

TEST(StoreWire, IntegersHaveFixedWidths) {
  std::uint64_t u = 0;
  std::int64_t i = 0;
  std::int32_t s = 0;
  EXPECT_TRUE(decode_u64(encode_u64(0x0102030405060708ull), &u));
  EXPECT_EQ(u, 0x0102030405060708ull);
  EXPECT_TRUE(decode_i64(encode_i64(-5), &i));
  EXPECT_EQ(i, -5);
  EXPECT_TRUE(decode_i32(encode_i32(-9), &s));
  EXPECT_EQ(s, -9);
  EXPECT_FALSE(decode_u64("1234567", &u));
  EXPECT_FALSE(decode_i64("123456789", &i));
}

TEST(StoreWire, RequestsSurviveEncodeAndDecode) {
  Request cas;
  cas.op = Op::compare_and_set;
  cas.keys = {"k"};
  cas.has_expected = true;
  cas.expected = "old";
  cas.value = "new";
  Request wait;
  wait.op = Op::wait;
  wait.keys = {"a", "b"};
  wait.timeout_ms = 1234;
  Request add;
  add.op = Op::add;
  add.keys = {"n"};
  add.delta = -7;
  for (const Request& in : {cas, wait, add}) {
    std::string bytes = encode_request(in);
    Frame frame;
    ASSERT_EQ(parse(bytes, &frame).status, ParseStatus::complete);
    Request out = decode_request(frame, kLimits);
    EXPECT_EQ(out.op, in.op);
    EXPECT_EQ(out.keys, in.keys);
    EXPECT_EQ(out.value, in.value);
    EXPECT_EQ(out.has_expected, in.has_expected);
    EXPECT_EQ(out.expected, in.expected);
    EXPECT_EQ(out.delta, in.delta);
    EXPECT_EQ(out.timeout_ms, in.timeout_ms);
  }
}

TEST(StoreWire, MalformedRequestsAreProtocolErrors) {
  auto decode = [](const std::string& bytes) {
    Frame frame;
    EXPECT_EQ(parse(bytes, &frame).status, ParseStatus::complete);
    return decode_request(frame, kLimits);
  };
  EXPECT_THROW(decode(encode_frame(Op::set, {"only-key"})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::set, {"", "v"})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::set, {std::string(65, 'k'), "v"})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::set, {"k", std::string(257, 'v')})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::add, {"k", "1234"})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::get, {})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::wait, {encode_u64(1)})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::compare_and_set, {"k", encode_u8(2), "", "d"})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::compare_and_set, {"k", encode_u8(0), "x", "d"})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::count, {"x"})), ProtocolError);
  EXPECT_THROW(decode(encode_frame(Op::welcome, {})), ProtocolError);
  EXPECT_NO_THROW(decode(encode_frame(Op::set, {std::string(64, 'k'), std::string(256, 'v')})));
}

TEST(StoreWire, ErrorFramesCarryAKnownStatus) {
  Frame frame;
  std::string bytes = encode_error(DT_ERR_AUTH, "no");
  ASSERT_EQ(parse(bytes, &frame).status, ParseStatus::complete);
  ErrorReply e = decode_error(frame);
  EXPECT_EQ(e.status, DT_ERR_AUTH);
  EXPECT_EQ(e.message, "no");
  std::string ok = encode_error(DT_OK, "fine");
  ASSERT_EQ(parse(ok, &frame).status, ParseStatus::complete);
  EXPECT_THROW(decode_error(frame), ProtocolError);
}

TEST(StoreWire, LimitsMustCarryTheLargestRequest) {
  StoreLimits limits;
  EXPECT_NO_THROW(check_store_limits(limits));
  limits.max_frame_bytes = limits.max_value_bytes;
  try {
    check_store_limits(limits);
    ADD_FAILURE() << "accepted a frame limit smaller than a value";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("max_frame_bytes"), std::string::npos);
  }
  limits = StoreLimits{};
  limits.max_connections = 0;
  EXPECT_THROW(check_store_limits(limits), Error);
  limits = StoreLimits{};
  limits.max_handshakes = 0;
  EXPECT_THROW(check_store_limits(limits), Error);
  limits = StoreLimits{};
  limits.refusal_log_period = std::chrono::milliseconds(0);
  EXPECT_THROW(check_store_limits(limits), Error);
}

}  // namespace
}  // namespace dtrain::bootstrap::wire
