// Ranks as threads of one process, each with a UCX host backend inside a
// DeviceRouter whose CUDA path is staged (FakeLanes on CPUs, or CUDA Queues
// on a GPU), or with the self backend for a world of one. Tests call
// the router with TensorViews, below the communicator's checks, so that
// views marked Memory::cuda may point at host memory on CPU-only machines.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "comm/backends/staged/router.hpp"

namespace dtrain::test {

struct StagedWorldOptions {
  int timeout_ms = 20000;
  comm::staged::Tuning tuning{};
  comm::staged::DevicePath path = comm::staged::DevicePath::staged;
  int device = 0;
  bool device_per_rank = false;  // rank r uses device r (NCCL needs one GPU per rank)
  // Makes each rank's staged lanes; fake_lanes() when empty.
  std::function<comm::staged::Lanes(int rank)> make_lanes;
  // Makes each rank's NCCL backend when path is nccl.
  std::function<std::unique_ptr<comm::Backend>(comm::Backend& host, int rank, int size,
                                                const std::atomic<bool>& aborted)>
      make_nccl;
};

struct StagedRank {
  int rank;
  int size;
  comm::staged::DeviceRouter& router;
  int timeout_ms;
  // Waits for `request` within the timeout and returns its status (failing
  // the test on a timeout).
  dt_status wait(const comm::RequestPtr& request) const;
  // wait() that expects DT_OK and reports the message otherwise.
  void ok(const comm::RequestPtr& request) const;
};

// Runs `body` on `n` ranks (threads); failures name the rank.
void run_staged_world(int n, const std::function<void(StagedRank&)>& body, const StagedWorldOptions& options = {});

}  // namespace dtrain::test
