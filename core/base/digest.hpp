// A 64-bit FNV-1a digest of a sequence of integers: how ranks compare long
// lists (layouts, settings) in one word before looking for what differs.
// Not cryptographic; a collision only hides a difference from a check.
#pragma once

#include <bit>
#include <cstdint>

namespace dtrain {

class Digest {
 public:
  void add(std::int64_t word) {
    for (int byte = 0; byte < 8; ++byte) {
      state_ ^= (static_cast<std::uint64_t>(word) >> (8 * byte)) & 0xffu;
      state_ *= 0x100000001b3u;
    }
  }
  std::int64_t value() const { return std::bit_cast<std::int64_t>(state_); }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325u;
};

}  // namespace dtrain
