// The streaming copy into shared memory: the same bytes as memcpy whatever
// the alignment of either side, and nothing written outside the range.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "device/cpu/stream_copy.hpp"

namespace dtrain::device::cpu {
namespace {

TEST(StreamCopy, CopiesEveryLengthAndAlignmentExactly) {
  constexpr std::size_t kRoom = 512;
  std::vector<std::uint8_t> source(kRoom);
  for (std::size_t i = 0; i < kRoom; ++i) source[i] = static_cast<std::uint8_t>(i * 7 + 1);
  for (std::size_t to = 0; to < 16; ++to) {
    for (std::size_t from = 0; from < 16; ++from) {
      for (std::size_t bytes : {0, 1, 15, 16, 17, 31, 48, 64, 100, 255, 400}) {
        std::vector<std::uint8_t> target(kRoom, 0xee);
        stream_copy(target.data() + to, source.data() + from, bytes);
        for (std::size_t i = 0; i < kRoom; ++i) {
          const bool inside = i >= to && i < to + bytes;
          const std::uint8_t expected = inside ? source[i - to + from] : 0xee;
          ASSERT_EQ(target[i], expected) << "byte " << i << " of a copy of " << bytes << " bytes from offset " << from
                                         << " to offset " << to;
        }
      }
    }
  }
}

TEST(StreamCopy, CopiesALargeBuffer) {
  std::vector<std::uint32_t> source(1 << 18);
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<std::uint32_t>(i * 2654435761u);
  std::vector<std::uint32_t> target(source.size());
  stream_copy(target.data(), source.data(), source.size() * sizeof(std::uint32_t));
  EXPECT_EQ(target, source);
}

}  // namespace
}  // namespace dtrain::device::cpu
