// Communication with CUDA tensors on GPUs, below the C API: the staged path
// with 2-4 ranks (threads) sharing one GPU, and NCCL with one GPU per rank
// (threads; skipped, saying so, with fewer than two GPUs: NCCL refuses two
// ranks on one GPU), including a deadline and abort ending a stuck NCCL
// collective. Skipped, with a message, without a CUDA device.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "device/cpu/half.hpp"
#include "gpu.hpp"
#include "staged_world.hpp"
#ifdef DTRAIN_HAVE_NCCL
#include "comm/backends/nccl/nccl_api.hpp"
#include "comm/backends/nccl/nccl_backend.hpp"
#endif

namespace dtrain::test {
namespace {

namespace cuda = device::cuda;
using comm::ReduceOp;

// ---- staged path, ranks sharing one GPU ------------------------------------

StagedWorldOptions on_gpu(std::size_t chunk_bytes) {
  StagedWorldOptions options;
  options.tuning.chunk_bytes = chunk_bytes;
  options.tuning.depth = 4;
  options.make_lanes = [](int) { return comm::staged::device_lanes(0); };
  return options;
}

TensorView device_view(void* data, std::int64_t count, DType dtype, int device = 0) {
  TensorView view;
  view.data = data;
  view.count = count;
  view.dtype = dtype;
  view.memory = Memory::cuda;
  view.device_id = device;
  return view;
}

float rank_value(int rank, std::int64_t i) { return static_cast<float>((rank + 1) * 8 + i % 1021); }

// Every collective on `me`'s router with device buffers; `element_count`
// per rank, results checked on the host.
void check_collectives(StagedRank& me, std::int64_t count, int device) {
  const int n = me.size;
  std::vector<float> mine(count);
  for (std::int64_t i = 0; i < count; ++i) mine[i] = rank_value(me.rank, i);
  auto send = to_device(mine, device);
  cuda::DeviceBuffer recv(device, count * n * sizeof(float));

  me.ok(me.router.allreduce(device_view(send.data(), count, DType::f32, device),
                            device_view(recv.data(), count, DType::f32, device), ReduceOp::sum));
  auto sum = to_host<float>(recv.data(), count);
  for (std::int64_t i = 0; i < count; i += 997) {
    float want = 0.0f;
    for (int r = 0; r < n; ++r) want += rank_value(r, i);
    ASSERT_EQ(sum[i], want) << "allreduce, rank " << me.rank << " element " << i;
  }

  me.ok(me.router.allgather(device_view(send.data(), count, DType::f32, device),
                            device_view(recv.data(), count * n, DType::f32, device)));
  auto gathered = to_host<float>(recv.data(), count * n);
  for (int r = 0; r < n; ++r) {
    for (std::int64_t i = 0; i < count; i += 991) {
      ASSERT_EQ(gathered[r * count + i], rank_value(r, i)) << "allgather, rank " << me.rank;
    }
  }

  // reduce_scatter over what was gathered: every rank holds the same data,
  // so block r sums to n times block r.
  cuda::DeviceBuffer scattered(device, count * sizeof(float));
  me.ok(me.router.reduce_scatter(device_view(recv.data(), count * n, DType::f32, device),
                                 device_view(scattered.data(), count, DType::f32, device), ReduceOp::sum));
  auto block = to_host<float>(scattered.data(), count);
  for (std::int64_t i = 0; i < count; i += 983) {
    ASSERT_EQ(block[i], n * rank_value(me.rank, i)) << "reduce_scatter, rank " << me.rank;
  }

  me.ok(me.router.broadcast(device_view(send.data(), count, DType::f32, device), n - 1));
  auto broadcast = to_host<float>(send.data(), count);
  for (std::int64_t i = 0; i < count; i += 977) ASSERT_EQ(broadcast[i], rank_value(n - 1, i));

  std::vector<std::int64_t> counts(n, count / n);
  me.ok(me.router.alltoallv(device_view(recv.data(), count, DType::f32, device), counts,
                            device_view(recv.data(), count, DType::f32, device), counts));
  me.ok(me.router.barrier());
}

class StagedOnOneGpu : public ::testing::TestWithParam<int> {};

TEST_P(StagedOnOneGpu, Collectives) {
  DT_REQUIRE_GPUS(1);
  const int n = GetParam();
  // Small chunks (many in flight) and a size that is not a multiple of them.
  run_staged_world(n, [](StagedRank& me) { check_collectives(me, (1 << 20) + 5, 0); }, on_gpu(64 << 10));
  run_staged_world(n, [](StagedRank& me) { check_collectives(me, 3, 0); }, on_gpu(4 << 20));
}

TEST_P(StagedOnOneGpu, PointToPointRing) {
  DT_REQUIRE_GPUS(1);
  run_staged_world(GetParam(), [](StagedRank& me) {
    const std::int64_t count = (4 << 20) / 4 + 5;
    std::vector<float> mine(count);
    for (std::int64_t i = 0; i < count; ++i) mine[i] = rank_value(me.rank, i);
    auto out = to_device(mine);
    cuda::DeviceBuffer in(0, count * sizeof(float));
    const int next = (me.rank + 1) % me.size;
    const int prev = (me.rank + me.size - 1) % me.size;
    auto r = me.router.recv(device_view(in.data(), count, DType::f32), prev, 0);
    auto s = me.router.send(device_view(out.data(), count, DType::f32), next, 0);
    me.ok(s);
    me.ok(r);
    auto got = to_host<float>(in.data(), count);
    for (std::int64_t i = 0; i < count; i += 1009) ASSERT_EQ(got[i], rank_value(prev, i));
    EXPECT_EQ(got[count - 1], rank_value(prev, count - 1));
  }, on_gpu(1 << 20));
}

INSTANTIATE_TEST_SUITE_P(Ranks, StagedOnOneGpu, ::testing::Values(2, 3, 4),
                         [](const auto& world) { return std::to_string(world.param) + "ranks"; });

// ---- NCCL, one GPU per rank ------------------------------------------------

#ifdef DTRAIN_HAVE_NCCL
StagedWorldOptions nccl_world(int timeout_ms = 60000) {
  StagedWorldOptions options;
  options.timeout_ms = timeout_ms;
  options.path = comm::staged::DevicePath::nccl;
  options.device_per_rank = true;
  options.make_lanes = [](int rank) { return comm::staged::device_lanes(rank); };
  options.make_nccl = [timeout_ms](comm::Backend& host, int rank, int size, const std::atomic<bool>&) {
    std::string why;
    const comm::nccl::Api* api = comm::nccl::api(&why);
    if (api == nullptr) raise(DT_ERR_UNSUPPORTED, why);
    std::unique_ptr<comm::Backend> backend = comm::nccl::NcclBackend::create(
        *api, rank, size, rank, timeout_ms, [&](ncclUniqueId& id) {
          TensorView view;
          view.data = &id;
          view.count = sizeof id;
          view.dtype = DType::u8;
          auto request = host.broadcast(view, 0);
          if (!host.wait(request, comm::Clock::now() + std::chrono::milliseconds(timeout_ms))) {
            raise(DT_ERR_TIMEOUT, "sharing the NCCL id");
          }
          if (request->status() != DT_OK) raise(request->status(), request->message());
        });
    return backend;
  };
  return options;
}

int nccl_ranks() { return std::min(device::cuda_device_count(), 4); }

#define DT_REQUIRE_NCCL()                                                                 \
  do {                                                                                    \
    DT_REQUIRE_GPUS(2);                                                                   \
    std::string why_;                                                                     \
    if (comm::nccl::api(&why_) == nullptr) GTEST_SKIP() << "NCCL is not usable: " << why_; \
  } while (0)

TEST(NcclMultiGpu, Collectives) {
  DT_REQUIRE_NCCL();
  run_staged_world(nccl_ranks(), [](StagedRank& me) {
    check_collectives(me, (1 << 20) + 5, me.rank);
    check_collectives(me, 3, me.rank);
  }, nccl_world());
}

TEST(NcclMultiGpu, InPlaceAndTypes) {
  DT_REQUIRE_NCCL();
  run_staged_world(nccl_ranks(), [](StagedRank& me) {
    const int n = me.size;
    const std::int64_t count = 1000;
    // reduce_scatter in place: recv at the start of send.
    std::vector<float> all(count * n);
    for (std::int64_t i = 0; i < count * n; ++i) all[i] = rank_value(me.rank, i);
    auto buf = to_device(all, me.rank);
    me.ok(me.router.reduce_scatter(device_view(buf.data(), count * n, DType::f32, me.rank),
                                   device_view(buf.data(), count, DType::f32, me.rank), ReduceOp::sum));
    auto got = to_host<float>(buf.data(), count);
    for (std::int64_t i = 0; i < count; ++i) {
      float want = 0.0f;
      for (int r = 0; r < n; ++r) want += rank_value(r, me.rank * count + i);
      ASSERT_EQ(got[i], want) << "reduce_scatter in place, rank " << me.rank;
    }
    // allgather in place: send at the start of recv.
    std::vector<float> start(count * n, -1.0f);
    for (std::int64_t i = 0; i < count; ++i) start[i] = rank_value(me.rank, i);
    auto gather = to_device(start, me.rank);
    me.ok(me.router.allgather(device_view(gather.data(), count, DType::f32, me.rank),
                              device_view(gather.data(), count * n, DType::f32, me.rank)));
    auto gathered = to_host<float>(gather.data(), count * n);
    for (int r = 0; r < n; ++r) ASSERT_EQ(gathered[r * count + 7], rank_value(r, 7)) << "allgather in place";
    // AVG in bf16 (ncclAvg, ncclBfloat16).
    std::vector<std::uint16_t> halves(513, device::cpu::float_to_bf16(static_cast<float>(2 * me.rank)));
    auto h = to_device(halves, me.rank);
    me.ok(me.router.allreduce(device_view(h.data(), 513, DType::bf16, me.rank),
                              device_view(h.data(), 513, DType::bf16, me.rank), ReduceOp::avg));
    EXPECT_EQ(device::cpu::bf16_to_float(to_host<std::uint16_t>(h.data(), 513)[512]), static_cast<float>(n - 1));
    // alltoallv with uneven counts: rank r sends q + 1 elements to rank q.
    std::vector<std::int64_t> send_counts(n), recv_counts(n, me.rank + 1);
    for (int q = 0; q < n; ++q) send_counts[q] = q + 1;
    const std::int64_t send_total = n * (n + 1) / 2;
    std::vector<std::int64_t> out(send_total);
    for (std::int64_t i = 0; i < send_total; ++i) out[i] = me.rank * 1000 + i;
    auto o = to_device(out, me.rank);
    cuda::DeviceBuffer in(me.rank, n * (me.rank + 1) * sizeof(std::int64_t));
    me.ok(me.router.alltoallv(device_view(o.data(), send_total, DType::i64, me.rank), send_counts,
                              device_view(in.data(), n * (me.rank + 1), DType::i64, me.rank), recv_counts));
    auto received = to_host<std::int64_t>(in.data(), n * (me.rank + 1));
    const std::int64_t my_first = me.rank * (me.rank + 1) / 2;  // where each sender's block for me starts
    for (int q = 0; q < n; ++q) EXPECT_EQ(received[q * (me.rank + 1)], q * 1000 + my_first) << "from rank " << q;
  }, nccl_world());
}

TEST(NcclMultiGpu, SplitHalvesReduceOverNccl) {
  DT_REQUIRE_NCCL();
  run_staged_world(nccl_ranks(), [](StagedRank& me) {
    auto one = to_device(std::vector<float>(8, 1.0f), me.rank);
    me.ok(me.router.allreduce(device_view(one.data(), 8, DType::f32, me.rank),
                              device_view(one.data(), 8, DType::f32, me.rank), ReduceOp::sum));
    int rank = -1, size = 0;
    auto half = me.router.split(me.rank % 2, me.rank, &rank, &size);
    ASSERT_NE(half, nullptr);
    auto ones = to_device(std::vector<float>(8, 1.0f), me.rank);
    auto request = half->allreduce(device_view(ones.data(), 8, DType::f32, me.rank),
                                   device_view(ones.data(), 8, DType::f32, me.rank), ReduceOp::sum);
    ASSERT_TRUE(half->wait(request, comm::Clock::now() + std::chrono::seconds(60)));
    EXPECT_EQ(request->status(), DT_OK) << request->message();
    EXPECT_EQ(to_host<float>(ones.data(), 8)[0], static_cast<float>(size));
    EXPECT_EQ(size, (me.size - me.rank % 2 + 1) / 2);
  }, nccl_world());
}

TEST(NcclMultiGpu, DeadlineThenAbortEndsAStuckCollective) {
  DT_REQUIRE_NCCL();
  run_staged_world(2, [](StagedRank& me) {
    auto buf = to_device(std::vector<float>(1024, 1.0f), me.rank);
    auto view = device_view(buf.data(), 1024, DType::f32, me.rank);
    me.ok(me.router.allreduce(view, view, ReduceOp::sum));  // NCCL is up on both
    me.ok(me.router.barrier());
    if (me.rank == 1) {
      // Rank 1 never joins the next allreduce, and stays until rank 0 has
      // given up on it (leaving would fail rank 0's NCCL at once).
      std::this_thread::sleep_for(std::chrono::seconds(3));
      return;
    }
    auto stuck = me.router.allreduce(view, view, ReduceOp::sum);
    const auto start = comm::Clock::now();
    EXPECT_FALSE(me.router.wait(stuck, start + std::chrono::milliseconds(500)));
    me.router.abort();  // what the communicator does on a timeout: ncclCommAbort
    EXPECT_TRUE(me.router.wait(stuck, comm::Clock::now() + std::chrono::seconds(10)));
    EXPECT_EQ(stuck->status(), DT_ERR_ABORTED) << stuck->message();
    EXPECT_LT(comm::Clock::now() - start, std::chrono::seconds(20));
  }, nccl_world());
}
#endif  // DTRAIN_HAVE_NCCL

}  // namespace
}  // namespace dtrain::test
