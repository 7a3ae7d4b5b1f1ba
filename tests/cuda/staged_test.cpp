// The staged path's logic on CPUs: chunking, packing of strided blocks, in
// place, host and "device" sides mixed, point-to-point between a staged and
// a host buffer, errors and aborts. "Device" memory is host memory here
// (fakes.hpp); tests/cuda/gpu_*_test.cpp run the same path on a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/self/self_backend.hpp"
#include "comm/backends/staged/staged_backend.hpp"
#include "fakes.hpp"
#include "staged_world.hpp"

namespace dtrain::test {
namespace {

using comm::ReduceOp;
using comm::staged::chunk_elements;
using comm::staged::chunk_ranges;
using comm::staged::StagedBackend;
using comm::staged::Tuning;

constexpr Memory kDev = Memory::cuda;
constexpr Memory kHost = Memory::host;

// Small chunks, so that every operation below is cut into many.
StagedWorldOptions small_chunks(std::size_t chunk_bytes = 256, int depth = 3) {
  StagedWorldOptions options;
  options.tuning.chunk_bytes = chunk_bytes;
  options.tuning.depth = depth;
  return options;
}

float value(int rank, std::int64_t i) { return static_cast<float>(rank * 1000 + i % 997); }

TEST(StagedChunks, ElementsPerChunk) {
  EXPECT_EQ(chunk_elements(4 << 20, 4, 1), 1 << 20);
  EXPECT_EQ(chunk_elements(4 << 20, 2, 1), 2 << 20);
  // reduce_scatter/allgather stage size blocks and a result per chunk.
  EXPECT_EQ(chunk_elements(4096, 4, 4 + 1), 204);
  // Never less than one element.
  EXPECT_EQ(chunk_elements(16, 8, 100), 1);
  EXPECT_EQ(chunk_elements(0, 4, 1), 1);
}

TEST(StagedChunks, RangesCoverEverythingOnce) {
  auto ranges = chunk_ranges(10, 4);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].length, 4);
  EXPECT_EQ(ranges[2].first, 8);
  EXPECT_EQ(ranges[2].length, 2);
  // Zero elements: still one (empty) host operation, as on a host rank.
  ranges = chunk_ranges(0, 4);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].length, 0);
  EXPECT_EQ(chunk_ranges(8, 4).size(), 2u);
  EXPECT_EQ(chunk_ranges(1, 1 << 20).size(), 1u);
}

TEST(StagedTuning, FromEnvironment) {
  setenv("DTRAIN_STAGED_CHUNK_BYTES", "65536", 1);
  setenv("DTRAIN_STAGED_DEPTH", "7", 1);
  Tuning tuning = comm::staged::tuning_from_env();
  EXPECT_EQ(tuning.chunk_bytes, 65536u);
  EXPECT_EQ(tuning.depth, 7);
  setenv("DTRAIN_STAGED_DEPTH", "0", 1);
  try {
    comm::staged::tuning_from_env();
    ADD_FAILURE() << "depth 0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("DTRAIN_STAGED_DEPTH"), std::string::npos) << e.what();
  }
  unsetenv("DTRAIN_STAGED_CHUNK_BYTES");
  unsetenv("DTRAIN_STAGED_DEPTH");
  tuning = comm::staged::tuning_from_env();
  EXPECT_EQ(tuning.chunk_bytes, std::size_t{4} << 20);
  EXPECT_EQ(tuning.depth, 4);
}

class Staged : public ::testing::TestWithParam<int> {};

TEST_P(Staged, AllreduceEveryPlacement) {
  const int n = GetParam();
  run_staged_world(n, [](StagedRank& me) {
    const std::int64_t count = 1000;  // 64 floats per chunk: 16 chunks
    std::vector<float> expected(count, 0.0f);
    for (int r = 0; r < me.size; ++r) {
      for (std::int64_t i = 0; i < count; ++i) expected[i] += value(r, i);
    }
    const std::pair<Memory, Memory> placements[] = {{kDev, kDev}, {kHost, kDev}, {kDev, kHost}};
    for (auto [send_memory, recv_memory] : placements) {
      std::vector<float> send(count), recv(count, -1.0f);
      for (std::int64_t i = 0; i < count; ++i) send[i] = value(me.rank, i);
      me.ok(me.router.allreduce(view_of(send.data(), count, DType::f32, send_memory),
                                view_of(recv.data(), count, DType::f32, recv_memory), ReduceOp::sum));
      EXPECT_EQ(recv, expected) << "rank " << me.rank;
      EXPECT_EQ(send[5], value(me.rank, 5)) << "send is only read";
    }
    // In place.
    std::vector<float> buf(count);
    for (std::int64_t i = 0; i < count; ++i) buf[i] = value(me.rank, i);
    auto v = view_of(buf.data(), count, DType::f32, kDev);
    me.ok(me.router.allreduce(v, v, ReduceOp::sum));
    EXPECT_EQ(buf, expected);
    // Max over i32 and an average over f64, through the host's kernels.
    std::vector<std::int32_t> ints(300, me.rank * 7), maxed(300, 0);
    me.ok(me.router.allreduce(view_of(ints.data(), 300, DType::i32, kDev),
                              view_of(maxed.data(), 300, DType::i32, kDev), ReduceOp::max));
    EXPECT_EQ(maxed[299], (me.size - 1) * 7);
    std::vector<double> d(100, static_cast<double>(me.rank)), avg(100, 0.0);
    me.ok(me.router.allreduce(view_of(d.data(), 100, DType::f64, kDev), view_of(avg.data(), 100, DType::f64, kDev),
                              ReduceOp::avg));
    EXPECT_DOUBLE_EQ(avg[50], (me.size - 1) / 2.0);
  }, small_chunks());
}

TEST_P(Staged, ReduceScatterPacksBlocks) {
  const int n = GetParam();
  run_staged_world(n, [](StagedRank& me) {
    const std::int64_t count = 301;  // per rank; 256-byte chunks hold 256 / (4 * (n + 1)) elements
    const std::int64_t total = count * me.size;
    for (bool in_place : {false, true}) {
      for (Memory send_memory : {kDev, kHost}) {
        if (in_place && send_memory == kHost) continue;
        std::vector<float> send(total), recv(count, -1.0f);
        for (std::int64_t i = 0; i < total; ++i) send[i] = value(me.rank, i);
        auto s = view_of(send.data(), total, DType::f32, send_memory);
        auto r = in_place ? view_of(send.data(), count, DType::f32, kDev) : view_of(recv.data(), count, DType::f32, kDev);
        me.ok(me.router.reduce_scatter(s, r, ReduceOp::sum));
        const float* out = in_place ? send.data() : recv.data();
        for (std::int64_t i = 0; i < count; ++i) {
          float want = 0.0f;
          for (int q = 0; q < me.size; ++q) want += value(q, me.rank * count + i);
          ASSERT_EQ(out[i], want) << "rank " << me.rank << " element " << i << (in_place ? " in place" : "");
        }
      }
    }
  }, small_chunks());
}

TEST_P(Staged, AllgatherUnpacksBlocks) {
  const int n = GetParam();
  run_staged_world(n, [](StagedRank& me) {
    const std::int64_t count = 203;
    const std::int64_t total = count * me.size;
    for (bool in_place : {false, true}) {
      for (Memory recv_memory : {kDev, kHost}) {
        if (in_place && recv_memory == kHost) continue;
        std::vector<float> send(count), recv(total, -1.0f);
        for (std::int64_t i = 0; i < count; ++i) (in_place ? recv[i] : send[i]) = value(me.rank, i);
        auto s = in_place ? view_of(recv.data(), count, DType::f32, kDev) : view_of(send.data(), count, DType::f32, kDev);
        me.ok(me.router.allgather(s, view_of(recv.data(), total, DType::f32, recv_memory)));
        for (int q = 0; q < me.size; ++q) {
          for (std::int64_t i = 0; i < count; ++i) {
            ASSERT_EQ(recv[q * count + i], value(q, i)) << "rank " << me.rank << " block " << q << " element " << i;
          }
        }
      }
    }
  }, small_chunks());
}

TEST_P(Staged, BroadcastFromEveryRoot) {
  const int n = GetParam();
  run_staged_world(n, [](StagedRank& me) {
    for (int root = 0; root < me.size; ++root) {
      std::vector<std::uint16_t> buf(777);
      for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::uint16_t>(me.rank * 100 + i);
      me.ok(me.router.broadcast(view_of(buf.data(), 777, DType::bf16, kDev), root));
      for (std::size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], static_cast<std::uint16_t>(root * 100 + i));
    }
  }, small_chunks());
}

TEST_P(Staged, AlltoallvUnevenAndInPlace) {
  const int n = GetParam();
  run_staged_world(n, [](StagedRank& me) {
    // Rank r sends r + q + 1 elements to rank q.
    std::vector<std::int64_t> send_counts(me.size), recv_counts(me.size);
    for (int q = 0; q < me.size; ++q) {
      send_counts[q] = me.rank + q + 1;
      recv_counts[q] = q + me.rank + 1;
    }
    const std::int64_t send_total = std::accumulate(send_counts.begin(), send_counts.end(), std::int64_t{0});
    const std::int64_t recv_total = std::accumulate(recv_counts.begin(), recv_counts.end(), std::int64_t{0});
    std::vector<std::int64_t> send(send_total), recv(recv_total + 3, -1);
    std::int64_t k = 0;
    for (int q = 0; q < me.size; ++q) {
      for (std::int64_t j = 0; j < send_counts[q]; ++j) send[k++] = me.rank * 10000 + q * 100 + j;
    }
    me.ok(me.router.alltoallv(view_of(send.data(), send_total, DType::i64, kDev), send_counts,
                              view_of(recv.data(), recv_total + 3, DType::i64, kDev), recv_counts));
    k = 0;
    for (int q = 0; q < me.size; ++q) {
      for (std::int64_t j = 0; j < recv_counts[q]; ++j) ASSERT_EQ(recv[k++], q * 10000 + me.rank * 100 + j);
    }
    EXPECT_EQ(recv[recv_total], -1) << "nothing beyond the counts is written";
    // In place with even counts.
    std::vector<std::int32_t> buf(me.size * 5);
    for (int q = 0; q < me.size; ++q) {
      for (int j = 0; j < 5; ++j) buf[q * 5 + j] = me.rank * 100 + q * 10 + j;
    }
    std::vector<std::int64_t> fives(me.size, 5);
    auto v = view_of(buf.data(), me.size * 5, DType::i32, kDev);
    me.ok(me.router.alltoallv(v, fives, v, fives));
    for (int q = 0; q < me.size; ++q) {
      for (int j = 0; j < 5; ++j) ASSERT_EQ(buf[q * 5 + j], q * 100 + me.rank * 10 + j);
    }
  }, small_chunks());
}

TEST_P(Staged, PointToPointBetweenStagedAndHostBuffers) {
  const int n = GetParam();
  run_staged_world(n, [](StagedRank& me) {
    // A ring: each rank sends a staged buffer (larger than a chunk: one
    // message, never cut) to the next and receives into a host buffer from
    // the previous one, then the other way round.
    const int next = (me.rank + 1) % me.size;
    const int prev = (me.rank + me.size - 1) % me.size;
    const std::int64_t count = 1000;
    for (bool staged_send : {true, false}) {
      std::vector<float> out(count), in(count, -1.0f);
      for (std::int64_t i = 0; i < count; ++i) out[i] = value(me.rank, i);
      auto r = me.router.recv(view_of(in.data(), count, DType::f32, staged_send ? kHost : kDev), prev, 3);
      auto s = me.router.send(view_of(out.data(), count, DType::f32, staged_send ? kDev : kHost), next, 3);
      me.ok(s);
      me.ok(r);
      for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(in[i], value(prev, i)) << "rank " << me.rank;
    }
    me.ok(me.router.barrier());
  }, small_chunks());
}

TEST_P(Staged, ZeroElements) {
  const int n = GetParam();
  run_staged_world(n, [](StagedRank& me) {
    float dummy = 0.0f;
    auto empty = view_of(&dummy, 0, DType::f32, kDev);
    me.ok(me.router.allreduce(empty, empty, ReduceOp::sum));
    me.ok(me.router.reduce_scatter(empty, empty, ReduceOp::sum));
    me.ok(me.router.allgather(empty, empty));
    me.ok(me.router.broadcast(empty, 0));
  }, small_chunks());
}

INSTANTIATE_TEST_SUITE_P(Worlds, Staged, ::testing::Values(1, 2, 3),
                         [](const auto& world) { return std::to_string(world.param) + "ranks"; });

TEST(StagedBackendAlone, StagingIsBoundedAndReused) {
  comm::SelfBackend host;
  auto stats = std::make_shared<LaneStats>();
  Tuning tuning;
  tuning.chunk_bytes = 1024;
  tuning.depth = 2;
  StagedBackend staged(host, fake_lanes(stats), 0, 1, 5000, tuning);
  std::vector<float> buf(10000, 1.0f), out(10000, 0.0f);
  for (int round = 0; round < 3; ++round) {
    auto request = staged.allreduce(view_of(buf.data(), 10000, DType::f32, kDev),
                                    view_of(out.data(), 10000, DType::f32, kDev), ReduceOp::sum);
    ASSERT_TRUE(request->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
    ASSERT_EQ(request->status(), DT_OK) << request->message();
  }
  EXPECT_EQ(out[9999], 1.0f);
  // 40 KB in 1 KiB chunks, three times: two buffers, allocated once.
  EXPECT_EQ(staged.staging_bytes(), 2u * 1024u);
  EXPECT_EQ(stats->allocated.load(), 2 * 1024);
  EXPECT_EQ(stats->to_host.load(), 3 * 40);
  EXPECT_EQ(stats->to_device.load(), 3 * 40);
}

// The copies of an operation wait for the caller's stream (comm.h): the
// lanes are told to wait for it before the first copy of each operation.
TEST(StagedBackendAlone, CopiesFollowTheCallersStream) {
  comm::SelfBackend host;
  auto stats = std::make_shared<LaneStats>();
  Tuning tuning;
  tuning.chunk_bytes = 1024;
  StagedBackend staged(host, fake_lanes(stats), 0, 1, 5000, tuning);
  std::vector<float> buf(1000, 2.0f);
  TensorView on_stream = view_of(buf.data(), 1000, DType::f32, kDev);
  on_stream.stream = reinterpret_cast<void*>(std::uintptr_t{0x5000});
  auto first = staged.allreduce(on_stream, on_stream, ReduceOp::sum);
  ASSERT_TRUE(first->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
  ASSERT_EQ(first->status(), DT_OK) << first->message();
  const int copies = stats->to_host + stats->to_device;
  auto second = staged.broadcast(view_of(buf.data(), 1000, DType::f32, kDev), 0);
  ASSERT_TRUE(second->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
  ASSERT_EQ(second->status(), DT_OK) << second->message();

  std::lock_guard<std::mutex> lock(stats->mutex);
  EXPECT_EQ(stats->followed, (std::vector<void*>{on_stream.stream, nullptr}));
  EXPECT_EQ(stats->copies_at_follow, (std::vector<int>{0, copies}));
  EXPECT_GT(copies, 0);
  EXPECT_EQ(buf[999], 2.0f);
}

TEST(StagedBackendAlone, DeviceFailureFailsTheRequest) {
  comm::SelfBackend host;
  auto stats = std::make_shared<LaneStats>();
  StagedBackend staged(host, fake_lanes(stats, 0, DT_ERR_INTERNAL), 0, 1, 5000, Tuning{});
  std::vector<float> buf(10, 1.0f);
  auto request = staged.allreduce(view_of(buf.data(), 10, DType::f32, kDev), view_of(buf.data(), 10, DType::f32, kDev),
                                  ReduceOp::sum);
  ASSERT_TRUE(request->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(request->status(), DT_ERR_INTERNAL);
  EXPECT_NE(request->message().find("the fake device failed"), std::string::npos) << request->message();
  EXPECT_NE(request->message().find("rank 0: allreduce #1"), std::string::npos) << request->message();
}

TEST(StagedBackendAlone, AbortCompletesPendingAndRefusesNewWork) {
  comm::SelfBackend host;
  auto stats = std::make_shared<LaneStats>();
  StagedBackend staged(host, fake_lanes(stats), 0, 1, 5000, Tuning{});
  std::vector<float> buf(10, 1.0f);
  // A receive nobody sends to stays pending until the abort.
  auto pending = staged.recv(view_of(buf.data(), 10, DType::f32, kDev), 0, 9);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(pending->done());
  std::thread aborter([&] {
    staged.abort();
    host.abort();
  });
  aborter.join();
  ASSERT_TRUE(pending->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(pending->status(), DT_ERR_ABORTED);
  auto later = staged.allreduce(view_of(buf.data(), 10, DType::f32, kDev), view_of(buf.data(), 10, DType::f32, kDev),
                                ReduceOp::sum);
  ASSERT_TRUE(later->done());
  EXPECT_EQ(later->status(), DT_ERR_ABORTED);
}

TEST(StagedBackendAlone, SelfSendToStagedReceive) {
  comm::SelfBackend host;
  auto stats = std::make_shared<LaneStats>();
  StagedBackend staged(host, fake_lanes(stats), 0, 1, 5000, Tuning{});
  std::vector<std::int8_t> out = {1, 2, 3}, in(3, 0);
  auto r = staged.recv(view_of(in.data(), 3, DType::i8, kDev), 0, 1);
  auto s = staged.send(view_of(out.data(), 3, DType::i8, kDev), 0, 1);
  ASSERT_TRUE(s->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
  ASSERT_TRUE(r->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(r->status(), DT_OK) << r->message();
  EXPECT_EQ(in, out);
  // A size the sender does not send is the host backend's mismatch.
  std::vector<std::int8_t> small(2, 0);
  auto r2 = staged.recv(view_of(small.data(), 2, DType::i8, kDev), 0, 1);
  auto s2 = staged.send(view_of(out.data(), 3, DType::i8, kDev), 0, 1);
  ASSERT_TRUE(r2->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(r2->status(), DT_ERR_MISMATCH) << r2->message();
  ASSERT_TRUE(s2->wait_until(comm::Clock::now() + std::chrono::seconds(10)));
}

}  // namespace
}  // namespace dtrain::test
