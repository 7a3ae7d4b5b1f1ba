#include "staged_world.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/self/self_backend.hpp"
#include "comm/backends/ucx/ucx_backend.hpp"
#include "fakes.hpp"
#include "ucx/harness.hpp"

namespace dtrain::test {

dt_status StagedRank::wait(const comm::RequestPtr& request) const {
  const auto deadline = comm::Clock::now() + std::chrono::milliseconds(timeout_ms);
  if (!router.wait(request, deadline)) {
    ADD_FAILURE() << "rank " << rank << ": " << request->what() << " did not complete within " << timeout_ms
                  << " ms";
    return DT_ERR_TIMEOUT;
  }
  return request->status();
}

void StagedRank::ok(const comm::RequestPtr& request) const {
  const dt_status status = wait(request);
  EXPECT_EQ(status, DT_OK) << "rank " << rank << ": " << request->what() << ": " << request->message();
}

void run_staged_world(int n, const std::function<void(StagedRank&)>& body, const StagedWorldOptions& options) {
  Board board(n);
  auto stats = std::make_shared<LaneStats>();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        std::unique_ptr<comm::Backend> host;
        if (n == 1) {
          host = std::make_unique<comm::SelfBackend>();
        } else {
          BoardRendezvous rendezvous(board, rank, options.timeout_ms);
          host = comm::make_ucx_backend(rendezvous, options.timeout_ms);
        }
        comm::staged::Devices devices;
        devices.rank = rank;
        devices.size = n;
        devices.device = options.device_per_rank ? rank : options.device;
        devices.timeout_ms = options.timeout_ms;
        devices.path = options.path;
        devices.tuning = options.tuning;
        devices.make_nccl = options.make_nccl;
        devices.make_lanes = [&, rank]() -> comm::staged::Lanes {
          if (options.make_lanes) return options.make_lanes(rank);
          return fake_lanes(stats);
        };
        comm::staged::DeviceRouter router(std::move(host), std::move(devices));
        StagedRank me{rank, n, router, options.timeout_ms};
        body(me);
      } catch (const Error& e) {
        ADD_FAILURE() << "rank " << rank << " of " << n << ": status " << e.status() << ": " << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << rank << " of " << n << ": " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace dtrain::test
