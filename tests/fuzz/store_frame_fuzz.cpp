// libFuzzer target for the rendezvous store's frame parser and request
// decoder: whatever bytes a peer sends, parsing stays within them, a frame it
// accepts encodes back to the same bytes, and a request it decodes encodes
// back to the same frame.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/store/protocol.hpp"
#include "bootstrap/store/wire.hpp"

namespace {

using namespace dtrain::bootstrap::wire;

constexpr std::size_t kMaxBody = 4096;
const KeyLimits kLimits{64, 1024};

void check(bool condition) {
  if (!condition) std::abort();
}

void decode_everything(const Frame& frame, const std::uint8_t* bytes, std::size_t length) {
  try {
    Request request = decode_request(frame, kLimits);
    std::string again = encode_request(request);
    check(again.size() == length && std::memcmp(again.data(), bytes, length) == 0);
  } catch (const ProtocolError&) {
  }
  try {
    decode_auth(frame);
  } catch (const ProtocolError&) {
  }
  try {
    decode_welcome(frame);
  } catch (const ProtocolError&) {
  }
  try {
    decode_error(frame);
  } catch (const ProtocolError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::uint8_t* p = data;
  std::size_t left = size;
  bool first = true;
  while (left > 0) {
    Frame frame;
    ParseResult r = parse_frame(p, left, kMaxBody, &frame);
    if (r.status == ParseStatus::invalid) {
      check(!r.error.empty());
      break;
    }
    if (r.status == ParseStatus::incomplete) break;
    check(r.frame_bytes >= kHeaderBytes && r.frame_bytes <= left && r.frame_bytes <= kHeaderBytes + kMaxBody);
    for (std::string_view field : frame.fields) {
      const auto* begin = reinterpret_cast<const std::uint8_t*>(field.data());
      check(field.empty() || (begin >= p && begin + field.size() <= p + r.frame_bytes));
    }
    std::string again = encode_frame(frame.op, frame.fields);
    check(again.size() == r.frame_bytes && std::memcmp(again.data(), p, r.frame_bytes) == 0);
    if (first && r.frame_bytes <= 512) {
      // A reader that has only part of a valid frame must be told to wait, never that it is invalid.
      for (std::size_t n = 0; n < r.frame_bytes; ++n) {
        check(parse_frame(p, n, kMaxBody, nullptr).status == ParseStatus::incomplete);
      }
    }
    decode_everything(frame, p, r.frame_bytes);
    p += r.frame_bytes;
    left -= r.frame_bytes;
    first = false;
  }
  return 0;
}
