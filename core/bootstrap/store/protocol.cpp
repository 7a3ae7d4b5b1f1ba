#include "bootstrap/store/protocol.hpp"

#include "bootstrap/store/auth.hpp"
#include "dtrain/status.h"

namespace dtrain::bootstrap::wire {

namespace {

[[noreturn]] void violation(const Frame& frame, const std::string& why) {
  throw ProtocolError(std::string(op_name(frame.op)) + " request: " + why);
}

void expect_fields(const Frame& frame, std::size_t n) {
  if (frame.fields.size() != n) {
    violation(frame, "has " + std::to_string(frame.fields.size()) + " fields instead of " + std::to_string(n));
  }
}

void expect_at_least(const Frame& frame, std::size_t n) {
  if (frame.fields.size() < n) {
    violation(frame, "has " + std::to_string(frame.fields.size()) + " fields, fewer than " + std::to_string(n));
  }
}

std::string_view key_field(const Frame& frame, std::size_t i, const KeyLimits& limits) {
  std::string_view key = frame.fields[i];
  if (key.empty()) violation(frame, "empty key");
  if (key.size() > limits.max_key_bytes) {
    violation(frame, "key of " + std::to_string(key.size()) + " bytes exceeds the limit of " +
                         std::to_string(limits.max_key_bytes));
  }
  return key;
}

std::string_view value_field(const Frame& frame, std::size_t i, const KeyLimits& limits) {
  std::string_view value = frame.fields[i];
  if (value.size() > limits.max_value_bytes) {
    violation(frame, "value of " + std::to_string(value.size()) + " bytes exceeds the limit of " +
                         std::to_string(limits.max_value_bytes));
  }
  return value;
}

}  // namespace

Request decode_request(const Frame& frame, const KeyLimits& limits) {
  Request r;
  r.op = frame.op;
  switch (frame.op) {
    case Op::set:
      expect_fields(frame, 2);
      r.keys.push_back(key_field(frame, 0, limits));
      r.value = value_field(frame, 1, limits);
      break;
    case Op::get:
    case Op::remove:
      expect_at_least(frame, 1);
      for (std::size_t i = 0; i < frame.fields.size(); ++i) r.keys.push_back(key_field(frame, i, limits));
      break;
    case Op::add:
      expect_fields(frame, 2);
      r.keys.push_back(key_field(frame, 0, limits));
      if (!decode_i64(frame.fields[1], &r.delta)) violation(frame, "the delta is not an 8-byte integer");
      break;
    case Op::compare_and_set: {
      expect_fields(frame, 4);
      r.keys.push_back(key_field(frame, 0, limits));
      std::uint8_t has = 0;
      if (!decode_u8(frame.fields[1], &has) || has > 1) violation(frame, "the has-expected flag is not 0 or 1");
      r.has_expected = has == 1;
      r.expected = value_field(frame, 2, limits);
      if (!r.has_expected && !r.expected.empty()) violation(frame, "an expected value without the flag");
      r.value = value_field(frame, 3, limits);
      break;
    }
    case Op::wait:
      expect_at_least(frame, 2);
      if (!decode_u64(frame.fields[0], &r.timeout_ms)) violation(frame, "the timeout is not an 8-byte integer");
      for (std::size_t i = 1; i < frame.fields.size(); ++i) r.keys.push_back(key_field(frame, i, limits));
      break;
    case Op::count:
      expect_fields(frame, 0);
      break;
    default:
      throw ProtocolError(std::string("a ") + op_name(frame.op) + " frame where a request was expected");
  }
  return r;
}

std::string encode_request(const Request& request) {
  std::vector<std::string_view> fields;
  std::string number;
  std::string flag;
  switch (request.op) {
    case Op::set:
      fields = {request.keys.at(0), request.value};
      break;
    case Op::get:
    case Op::remove:
      fields = request.keys;
      break;
    case Op::add:
      number = encode_i64(request.delta);
      fields = {request.keys.at(0), number};
      break;
    case Op::compare_and_set:
      flag = encode_u8(request.has_expected ? 1 : 0);
      fields = {request.keys.at(0), flag, request.has_expected ? request.expected : std::string_view(),
                request.value};
      break;
    case Op::wait:
      number = encode_u64(request.timeout_ms);
      fields.push_back(number);
      fields.insert(fields.end(), request.keys.begin(), request.keys.end());
      break;
    case Op::count:
      break;
    default:
      throw ProtocolError(std::string("cannot encode a ") + op_name(request.op) + " frame as a request");
  }
  return encode_frame(request.op, fields);
}

AuthAnswer decode_auth(const Frame& frame) {
  if (frame.op != Op::auth) throw ProtocolError(std::string("a ") + op_name(frame.op) + " frame before auth");
  expect_fields(frame, 2);
  if (frame.fields[0].size() != auth::kNonceBytes || frame.fields[1].size() != auth::kProofBytes) {
    violation(frame, "nonce or proof of the wrong length");
  }
  return AuthAnswer{frame.fields[0], frame.fields[1]};
}

Welcome decode_welcome(const Frame& frame) {
  if (frame.op != Op::welcome || frame.fields.size() != 4) throw ProtocolError("malformed welcome frame");
  Welcome w;
  w.proof = frame.fields[0];
  if (w.proof.size() != auth::kProofBytes || !decode_u64(frame.fields[1], &w.max_key_bytes) ||
      !decode_u64(frame.fields[2], &w.max_value_bytes) || !decode_u64(frame.fields[3], &w.max_frame_bytes)) {
    throw ProtocolError("malformed welcome frame");
  }
  return w;
}

std::string encode_error(int status, std::string_view message) {
  std::string code = encode_i32(status);
  return encode_frame(Op::error, {code, message});
}

ErrorReply decode_error(const Frame& frame) {
  if (frame.op != Op::error || frame.fields.size() != 2) throw ProtocolError("malformed error frame");
  std::int32_t status = 0;
  if (!decode_i32(frame.fields[0], &status) || status > DT_ERR_INVALID_ARGUMENT || status < DT_ERR_INTERNAL) {
    throw ProtocolError("error frame with an unknown status");
  }
  return ErrorReply{status, frame.fields[1]};
}

}  // namespace dtrain::bootstrap::wire
