// How a 64-bit UCP tag names a message. Every receive matches all 64 bits, so
// a message can only land in the receive that was posted for it:
//
//   bit 63      1 = point-to-point (dt_send/dt_recv), 0 = collective
//   bits 56-62  the communicator's context id
//   bits 36-55  the sender's rank
//   collective: bits 20-35 the operation's sequence number (mod 2^16),
//               bits 0-19  the step within the operation (algorithm-defined)
//   p2p:        bits 0-30  the user's tag
//   control:    bit 35 set (with bit 63), bits 0-34 zero: a rank leaving
//               in good order says goodbye (see Transport)
//
// Each communicator has its own UCP worker, so the context id is a second
// line of defence; the sequence number keeps consecutive collectives apart
// when one rank runs ahead and its messages wait unexpected at a peer.
#pragma once

#include <cstdint>

#include <ucp/api/ucp.h>

namespace dtrain::comm::ucx {

inline constexpr int kMaxRanks = 1 << 20;
inline constexpr std::uint32_t kStepLimit = 1u << 20;
inline constexpr std::uint32_t kContextMask = 0x7f;

inline constexpr ucp_tag_t kFullMask = ~ucp_tag_t{0};

inline ucp_tag_t collective_tag(std::uint32_t context, int source, std::uint64_t sequence, std::uint32_t step) {
  return (ucp_tag_t{context & kContextMask} << 56) | (static_cast<ucp_tag_t>(source) << 36) |
         ((sequence & 0xffffu) << 20) | (step & (kStepLimit - 1));
}

inline ucp_tag_t p2p_tag(std::uint32_t context, int source, int user_tag) {
  return (ucp_tag_t{1} << 63) | (ucp_tag_t{context & kContextMask} << 56) |
         (static_cast<ucp_tag_t>(source) << 36) | static_cast<ucp_tag_t>(static_cast<std::uint32_t>(user_tag));
}

inline ucp_tag_t goodbye_tag(std::uint32_t context, int source) {
  return (ucp_tag_t{1} << 63) | (ucp_tag_t{context & kContextMask} << 56) |
         (static_cast<ucp_tag_t>(source) << 36) | (ucp_tag_t{1} << 35);
}

// Matches a goodbye from any source.
inline constexpr ucp_tag_t kAnySourceMask = ~(ucp_tag_t{kMaxRanks - 1} << 36);

}  // namespace dtrain::comm::ucx
