// How a rank writes its mailbox: fixed by size where that is known to be
// best, and chosen by the measured costs of the two ways elsewhere.

#include "comm/backends/ucx/handoff.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace dtrain::comm::ucx {
namespace {

constexpr std::size_t kLarge = 1 << 20;
constexpr std::size_t kMid = 64 * 1024;
constexpr std::size_t kSmall = 4 * 1024;
// A real copy takes well under a nanosecond a byte: kCheap is more than
// any but a preempted one, kDear more than any.
constexpr double kCheap = 1;
constexpr double kDear = 1e12;

TEST(Handoff, SmallPiecesAreCachedAndMidSizedOnesStreamedWhereRanksHaveCoresApart) {
  Handoff handoff(true);
  EXPECT_FALSE(handoff.adaptive(kSmall));
  EXPECT_FALSE(handoff.streams(kSmall));
  EXPECT_FALSE(handoff.adaptive(kMid));
  EXPECT_TRUE(handoff.streams(kMid));
  // Measured costs do not change either.
  handoff.record(true, 1, kDear);
  handoff.record(false, 1, kCheap);
  EXPECT_FALSE(handoff.streams(kSmall));
  EXPECT_TRUE(handoff.streams(kMid));
}

TEST(Handoff, WhereRanksShareCoresMidSizedPiecesAreChosenByCost) {
  Handoff handoff(false);
  EXPECT_TRUE(handoff.adaptive(kMid));
  handoff.record(true, 1, kCheap);
  handoff.record(false, 1, kCheap);
  EXPECT_FALSE(handoff.streams(kMid));
}

TEST(Handoff, LargePiecesStreamWhileCachedCopiesCostFarMore) {
  Handoff handoff(true);
  ASSERT_TRUE(handoff.adaptive(kLarge));
  EXPECT_TRUE(handoff.streams(kLarge)) << "streaming is measured first";
  handoff.record(true, 1, kCheap);
  handoff.record(false, 1, kCheap);
  EXPECT_FALSE(handoff.far());
  EXPECT_FALSE(handoff.streams(kLarge));

  // One dear copy could be one that was preempted: it takes a few.
  handoff.record(false, 1, kDear);
  EXPECT_FALSE(handoff.far());
  handoff.record(false, 1, kDear);
  handoff.record(false, 1, kDear);
  EXPECT_TRUE(handoff.far());
  EXPECT_TRUE(handoff.streams(kLarge));

  // Cached copies that are cheap again bring it back.
  int copies = 0;
  while (handoff.far() && copies < 64) {
    handoff.record(false, 1, kCheap);
    ++copies;
  }
  EXPECT_FALSE(handoff.far());
  EXPECT_LT(copies, 64);
}

TEST(Handoff, EveryKProbeEveryCopiesTryTheWayNotTaken) {
  Handoff handoff(true);
  handoff.record(true, 1, kCheap);
  for (int i = 0; i < 20; ++i) handoff.record(false, 1, kDear);
  ASSERT_TRUE(handoff.far());
  std::vector<unsigned char> from(64, 7), to(64);
  unsigned cached = 0;
  for (unsigned i = 0; i < 2 * Handoff::kProbeEvery; ++i) {
    if (!handoff.streams(kLarge)) ++cached;
    handoff.copy(to.data(), from.data(), to.size(), kLarge);
    ASSERT_EQ(to, from);
  }
  EXPECT_EQ(cached, 2u);
  EXPECT_TRUE(handoff.far()) << "a probe of a copy that is still dear does not end streaming";
}

}  // namespace
}  // namespace dtrain::comm::ucx
