// dt_comm_split over UCX: groups by color, ordered by key, each with its own
// worker, all usable alongside the parent.

#include <gtest/gtest.h>

#include <vector>

#include "dtrain/common.h"
#include "harness.hpp"

namespace dtrain::test {
namespace {

std::int64_t sum_over(comm::Communicator& comm, std::int64_t mine) {
  Tensor t(&mine, 1, DType::i64);
  wait(comm, comm.allreduce(t.get(), t.get(), DT_SUM));
  return mine;
}

TEST(UcxSplit, OddAndEven) {
  run_world(4, [](comm::Communicator& comm) {
    const int me = comm.rank();
    // Keys reverse the order within each group.
    auto child = comm.split(me % 2, -me);
    ASSERT_NE(child, nullptr);
    EXPECT_EQ(child->size(), 2);
    EXPECT_EQ(child->rank(), me < 2 ? 1 : 0);
    // Collectives on both, interleaved.
    EXPECT_EQ(sum_over(*child, 1 << me), me % 2 == 0 ? 1 + 4 : 2 + 8);
    EXPECT_EQ(sum_over(comm, 1 << me), 15);
    std::vector<float> big(100003, static_cast<float>(me));
    Tensor b(big.data(), big.size(), DType::f32);
    auto on_child = child->allreduce(b.get(), b.get(), DT_MAX);
    EXPECT_EQ(sum_over(comm, me), 6);
    wait(*child, on_child);
    EXPECT_EQ(big[100002], me % 2 == 0 ? 2.0f : 3.0f);
    // Point-to-point inside the group, by group rank.
    std::int32_t token = child->rank() == 0 ? me : -1;
    Tensor t(&token, 1, DType::i32);
    wait(*child, child->broadcast(t.get(), 0));
    EXPECT_EQ(token, me % 2 == 0 ? 2 : 3);
  });
}

TEST(UcxSplit, SingletonsAndLeftOut) {
  run_world(3, [](comm::Communicator& comm) {
    const int me = comm.rank();
    auto alone = comm.split(me, 0);
    ASSERT_NE(alone, nullptr);
    EXPECT_EQ(alone->size(), 1);
    EXPECT_EQ(alone->rank(), 0);
    EXPECT_EQ(sum_over(*alone, 5), 5);
    wait(*alone, alone->barrier());

    auto some = comm.split(me == 1 ? DT_UNDEF : 0, 0);
    if (me == 1) {
      EXPECT_EQ(some, nullptr);
    } else {
      ASSERT_NE(some, nullptr);
      EXPECT_EQ(some->size(), 2);
      EXPECT_EQ(sum_over(*some, me), 2);
    }
    EXPECT_EQ(sum_over(comm, 1), 3);
  });
}

TEST(UcxSplit, SplitOfASplit) {
  run_world(4, [](comm::Communicator& comm) {
    auto half = comm.split(comm.rank() / 2, 0);
    ASSERT_NE(half, nullptr);
    auto quarter = half->split(half->rank(), 0);
    ASSERT_NE(quarter, nullptr);
    EXPECT_EQ(quarter->size(), 1);
    EXPECT_EQ(sum_over(*half, comm.rank()), comm.rank() < 2 ? 1 : 5);
    // Sub-communicators go first, the world last; any order would do.
    quarter.reset();
    EXPECT_EQ(sum_over(comm, 1), 4);
  });
}

}  // namespace
}  // namespace dtrain::test
