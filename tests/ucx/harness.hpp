// Running N ranks of the UCX backend as N threads of one process. Each rank
// has its own UCP context and worker, exactly as separate processes would;
// UCX's shared-memory and TCP transports work between threads as they do
// between processes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/dtype.hpp"
#include "base/error.hpp"
#include "bootstrap/rendezvous.hpp"
#include "comm/backends/ucx/tuning.hpp"
#include "comm/communicator.hpp"

namespace dtrain::test {

// An in-memory rendezvous shared by the threads of one test.
class Board {
 public:
  explicit Board(int size) : size_(size) {}
  int size() const { return size_; }
  std::vector<std::string> allgather(int rank, const std::string& key, const std::string& local, int timeout_ms);

 private:
  const int size_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::map<int, std::string>> posts_;
};

class BoardRendezvous final : public bootstrap::Rendezvous {
 public:
  BoardRendezvous(Board& board, int rank, int timeout_ms) : board_(board), rank_(rank), timeout_ms_(timeout_ms) {}
  int rank() const override { return rank_; }
  int size() const override { return board_.size(); }
  std::vector<std::string> allgather(const std::string& key, const std::string& local) override {
    return board_.allgather(rank_, key, local, timeout_ms_);
  }

 private:
  Board& board_;
  const int rank_;
  const int timeout_ms_;
};

struct WorldOptions {
  int timeout_ms = 30000;
  comm::ucx::Tuning tuning{};
};

// Runs `body(comm)` on `n` threads, one communicator each, over the UCX
// backend. Under a launcher (`dtrun -n N dtrain_ucx_tests`) the process is
// instead one rank of N processes, and worlds of another size are skipped. Failures inside `body` (gtest assertions, exceptions) are
// reported as test failures naming the rank.
void run_world(int n, const std::function<void(comm::Communicator&)>& body, const WorldOptions& options = {});

// A view of caller-owned host memory, as the communicator takes it.
class Tensor {
 public:
  Tensor(void* data, std::int64_t count, DType dtype) : view_(host_view(data, count, dtype)) {}
  const TensorView& get() const { return view_; }

 private:
  TensorView view_;
};

// Waits for a request through the communicator (its own deadline).
void wait(comm::Communicator& comm, const comm::RequestPtr& request);

// A blocking allreduce as the C API makes it (comm::start_and_wait): said
// to be waited for at once, which lets the engine run it immediately.
void allreduce_now(comm::Communicator& comm, Tensor& send, Tensor& recv, int op);

// Runs `call`, expecting it to throw an Error with `status`; returns its
// message (empty, with a test failure, when it does not throw).
template <typename Call>
std::string expect_error(dt_status status, Call&& call) {
  try {
    call();
    ADD_FAILURE() << "it succeeded; expected status " << status;
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    return e.what();
  }
  return {};
}

}  // namespace dtrain::test
