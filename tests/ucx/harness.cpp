#include "harness.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <thread>

#include "base/error.hpp"
#include "bootstrap/launch_env.hpp"
#include "bootstrap/open_rendezvous.hpp"
#include "comm/backends/ucx/ucx_backend.hpp"

namespace dtrain::test {

std::vector<std::string> Board::allgather(int rank, const std::string& key, const std::string& local,
                                          int timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto& posts = posts_[key];
  posts[rank] = local;
  changed_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (!changed_.wait_until(lock, deadline, [&] { return static_cast<int>(posts.size()) == size_; })) {
    std::string missing;
    for (int r = 0; r < size_; ++r) {
      if (!posts.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
    raise(DT_ERR_TIMEOUT, "rendezvous '" + key + "': no word from rank(s) " + missing);
  }
  std::vector<std::string> all;
  for (auto& [r, value] : posts) all.push_back(value);
  return all;
}

namespace {

// Under a launcher (dtrun sets DTRAIN_WORLD_SIZE), this process is one rank
// of a world of processes: it joins through the launcher's store and runs
// only its own rank's share; worlds of another size are skipped.
bool launched() { return std::getenv("DTRAIN_WORLD_SIZE") != nullptr; }

void run_launched_rank(int n, const std::function<void(comm::Communicator&)>& body, const WorldOptions& options) {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  bootstrap::LaunchConfig launch = bootstrap::resolve_launch(opts);
  if (launch.world_size != n) GTEST_SKIP() << "a world of " << n << " ranks; this job has " << launch.world_size;
  // Every process runs the same tests in the same order, so the k-th world
  // of each meets the k-th of the others.
  static int worlds = 0;
  const std::string scope = "test" + std::to_string(worlds++) + "/";
  try {
    auto rendezvous =
        bootstrap::open_rendezvous(opts, launch, std::chrono::milliseconds(options.timeout_ms), scope);
    auto backend = comm::make_ucx_backend(*rendezvous, options.timeout_ms, options.tuning);
    comm::Communicator comm(launch.rank, n, options.timeout_ms, std::move(backend));
    body(comm);
  } catch (const Error& e) {
    ADD_FAILURE() << "rank " << launch.rank << " of " << n << ": status " << e.status() << ": " << e.what();
  }
}

}  // namespace

void run_world(int n, const std::function<void(comm::Communicator&)>& body, const WorldOptions& options) {
  if (launched()) {
    run_launched_rank(n, body, options);
    return;
  }
  Board board(n);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        BoardRendezvous rendezvous(board, rank, options.timeout_ms);
        auto backend = comm::make_ucx_backend(rendezvous, options.timeout_ms, options.tuning);
        comm::Communicator comm(rank, n, options.timeout_ms, std::move(backend));
        body(comm);
      } catch (const Error& e) {
        ADD_FAILURE() << "rank " << rank << " of " << n << ": status " << e.status() << ": " << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << rank << " of " << n << ": " << e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
}

void wait(comm::Communicator& comm, const comm::RequestPtr& request) { comm.wait(request, -1); }

void allreduce_now(comm::Communicator& comm, Tensor& send, Tensor& recv, int op) {
  comm::start_and_wait(comm, [&] { return comm.allreduce(send.get(), recv.get(), op); });
}

}  // namespace dtrain::test
