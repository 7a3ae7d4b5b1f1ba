// How a 64-bit tag names a message. Every receive matches all 64 bits, so
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
// Each communicator has its own endpoint of the transport (a UCP worker),
// so the context id is a second line of defence; the sequence number keeps
// consecutive collectives apart when one rank runs ahead and its messages
// wait unexpected at a peer.
#pragma once

#include <cstdint>

#include "comm/schedules/messages.hpp"

namespace dtrain::comm::schedule {

inline constexpr int kMaxRanks = 1 << 20;
inline constexpr std::uint32_t kStepLimit = 1u << 20;
inline constexpr std::uint32_t kContextMask = 0x7f;

inline constexpr Tag kFullMask = ~Tag{0};

inline Tag collective_tag(std::uint32_t context, int source, std::uint64_t sequence, std::uint32_t step) {
  return (Tag{context & kContextMask} << 56) | (static_cast<Tag>(source) << 36) |
         ((sequence & 0xffffu) << 20) | (step & (kStepLimit - 1));
}

inline Tag p2p_tag(std::uint32_t context, int source, int user_tag) {
  return (Tag{1} << 63) | (Tag{context & kContextMask} << 56) |
         (static_cast<Tag>(source) << 36) | static_cast<Tag>(static_cast<std::uint32_t>(user_tag));
}

inline Tag goodbye_tag(std::uint32_t context, int source) {
  return (Tag{1} << 63) | (Tag{context & kContextMask} << 56) |
         (static_cast<Tag>(source) << 36) | (Tag{1} << 35);
}

// Matches a goodbye from any source.
inline constexpr Tag kAnySourceMask = ~(Tag{kMaxRanks - 1} << 36);

}  // namespace dtrain::comm::schedule
