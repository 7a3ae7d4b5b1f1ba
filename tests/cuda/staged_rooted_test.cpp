// The rooted and uneven collectives and p2p groups on the staged path, on
// CPUs: "device" views (host memory, fakes.hpp) go through the router, are
// staged into host buffers and back, and only the counted elements are
// written. Off the root, unused views are empty with the device placement,
// as the communicator passes them.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "comm/exchange_plan.hpp"
#include "fakes.hpp"
#include "staged_world.hpp"

namespace dtrain::test {
namespace {

using comm::ReduceOp;

constexpr Memory kDev = Memory::cuda;
constexpr Memory kHost = Memory::host;

TensorView unused(DType dtype) { return view_of(static_cast<float*>(nullptr), 0, dtype, kDev); }

class StagedRooted : public ::testing::TestWithParam<int> {};

TEST_P(StagedRooted, ReduceGatherAndScatterAtEveryRoot) {
  run_staged_world(GetParam(), [](StagedRank& me) {
    const int n = me.size;
    const std::int64_t count = 300;
    for (int root = 0; root < n; ++root) {
      std::vector<std::int64_t> send(count), recv(count * n + 1, -1);
      for (std::int64_t i = 0; i < count; ++i) send[i] = me.rank * 1000 + i;
      const auto s = view_of(send.data(), count, DType::i64, kDev);
      me.ok(me.router.reduce(s, me.rank == root ? view_of(recv.data(), count, DType::i64, kDev) : unused(DType::i64),
                             ReduceOp::sum, root));
      if (me.rank == root) {
        for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(recv[i], 1000 * n * (n - 1) / 2 + n * i);
      }
      me.ok(me.router.gather(
          s, me.rank == root ? view_of(recv.data(), count * n, DType::i64, kDev) : unused(DType::i64), root));
      if (me.rank == root) {
        for (std::int64_t i = 0; i < count * n; ++i) ASSERT_EQ(recv[i], (i / count) * 1000 + i % count);
        EXPECT_EQ(recv[count * n], -1);
      }
      std::vector<std::int64_t> mine(count, -1);
      me.ok(me.router.scatter(me.rank == root ? view_of(recv.data(), count * n, DType::i64, kDev) : unused(DType::i64),
                              view_of(mine.data(), count, DType::i64, kDev), root));
      if (me.rank == root) {
        for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(mine[i], me.rank * 1000 + i);
      }
      me.ok(me.router.barrier());
    }
  });
}

TEST_P(StagedRooted, AllgathervAndReduceScattervWriteOnlyTheCountedElements) {
  run_staged_world(GetParam(), [](StagedRank& me) {
    const int n = me.size;
    std::vector<std::int64_t> counts(n);
    for (int r = 0; r < n; ++r) counts[r] = r == 0 ? 0 : 100 * r + 1;
    const std::vector<std::int64_t> starts = comm::block_starts(counts);
    const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
    std::vector<float> send(counts[me.rank]), recv(total + 2, -1.0f);
    for (std::int64_t i = 0; i < counts[me.rank]; ++i) send[i] = static_cast<float>(me.rank * 1000 + i);
    me.ok(me.router.allgatherv(view_of(send.data(), counts[me.rank], DType::f32, kDev),
                               view_of(recv.data(), total + 2, DType::f32, kDev), counts));
    for (int r = 0; r < n; ++r) {
      for (std::int64_t i = 0; i < counts[r]; ++i) ASSERT_EQ(recv[starts[r] + i], static_cast<float>(r * 1000 + i));
    }
    EXPECT_EQ(recv[total], -1.0f) << "nothing past the counts";
    std::vector<float> blocks(total), block(counts[me.rank], -1.0f);
    for (std::int64_t i = 0; i < total; ++i) blocks[i] = static_cast<float>(me.rank + i);
    me.ok(me.router.reduce_scatterv(view_of(blocks.data(), total, DType::f32, kDev), counts,
                                    view_of(block.data(), counts[me.rank], DType::f32, kDev), ReduceOp::max));
    for (std::int64_t i = 0; i < counts[me.rank]; ++i)
      ASSERT_EQ(block[i], static_cast<float>(n - 1 + starts[me.rank] + i));
  });
}

TEST_P(StagedRooted, P2pGroupOfStagedAndHostBuffers) {
  run_staged_world(GetParam(), [](StagedRank& me) {
    const int next = (me.rank + 1) % me.size;
    const int prev = (me.rank + me.size - 1) % me.size;
    const std::int64_t count = 5000;
    std::vector<std::int32_t> out(count), in_staged(count, -1), in_host(count, -1);
    for (std::int64_t i = 0; i < count; ++i) out[i] = me.rank * 100000 + static_cast<std::int32_t>(i);
    // To the next rank twice: once from a staged buffer, once from a host
    // one; received the same way round.
    const std::vector<comm::P2pOp> ops{{false, view_of(in_staged.data(), count, DType::i32, kDev), prev, 1},
                                       {true, view_of(out.data(), count, DType::i32, kDev), next, 1},
                                       {true, view_of(out.data(), count, DType::i32, kHost), next, 2},
                                       {false, view_of(in_host.data(), count, DType::i32, kHost), prev, 2}};
    me.ok(me.router.p2p_group(ops));
    for (std::int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(in_staged[i], prev * 100000 + i);
      ASSERT_EQ(in_host[i], prev * 100000 + i);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, StagedRooted, ::testing::Values(1, 2, 3),
                         [](const auto& world) { return std::to_string(world.param) + "ranks"; });

}  // namespace
}  // namespace dtrain::test
