// How the schedules that pair ranks by flipping bits (recursive doubling,
// halving-doubling) run on a world that is not a power of two: the first
// 2 * rem ranks pair up beforehand, each even one handing its data to its
// odd neighbour and sitting out the rounds, then receiving the result
// (MPICH's fix-up). The others take part under a virtual rank.
#pragma once

#include <bit>
#include <cstdint>

#include "comm/schedules/tags.hpp"

namespace dtrain::comm::schedule {

// The steps of the hand-over and of the hand-back; the rounds number theirs
// from 1.
inline constexpr std::uint32_t kFoldStep = 0;
inline constexpr std::uint32_t kUnfoldStep = kStepLimit - 1;

struct Fold {
  int pof2;  // ranks taking part in the rounds
  int rem;   // ranks sitting them out

  explicit Fold(int size)
      : pof2(static_cast<int>(std::bit_floor(static_cast<unsigned>(size)))), rem(size - pof2) {}

  bool folded(int rank) const { return rank < 2 * rem; }
  // Folded ranks: the even one hands over, the odd one takes part.
  bool sits_out(int rank) const { return folded(rank) && rank % 2 == 0; }
  // The virtual rank of a rank taking part, and the rank behind a virtual one.
  int vrank(int rank) const { return folded(rank) ? rank / 2 : rank - rem; }
  int rank(int vrank) const { return vrank < rem ? vrank * 2 + 1 : vrank + rem; }
};

}  // namespace dtrain::comm::schedule
