// Aborts, departures and silent peers, with ranks as threads.

#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <thread>

#include "base/error.hpp"
#include "comm/backends/ucx/backend.hpp"
#include "comm/backends/ucx/ucx_backend.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Waits for `request`, expecting it to fail with `status`; returns the message.
std::string expect_failure(comm::Communicator& comm, const comm::RequestPtr& request, dt_status status) {
  return expect_error(status, [&] { comm.wait(request, -1); });
}

TEST(UcxFaults, AbortFromAnotherThreadEndsAPendingReceive) {
  std::latch done(2);
  run_world(2, [&](comm::Communicator& comm) {
    if (comm.rank() == 0) {
      float x = 0;
      Tensor t(&x, 1, DType::f32);
      auto request = comm.recv(t.get(), 1, 3);  // never sent
      Clock::time_point aborted;
      std::thread aborter([&] {
        std::this_thread::sleep_for(milliseconds(100));
        aborted = Clock::now();
        comm.abort();
      });
      const std::string message = expect_failure(comm, request, DT_ERR_ABORTED);
      const auto took = Clock::now() - aborted;
      aborter.join();
      EXPECT_LT(took, milliseconds(1000));
      EXPECT_NE(message.find("abort"), std::string::npos) << message;
      // Broken from now on.
      EXPECT_THROW(comm.barrier(), Error);
    }
    // The peer stays until rank 0 is done, so its departure plays no part.
    done.arrive_and_wait();
  });
}

TEST(UcxFaults, DestroyEndsPendingOperations) {
  std::latch done(2);
  run_world(2, [&](comm::Communicator& comm) {
    if (comm.rank() == 0) {
      std::vector<float> big(1 << 20);
      Tensor t(big.data(), big.size(), DType::f32);
      auto recv = comm.recv(t.get(), 1, 3);
      auto collective = comm.allreduce(t.get(), t.get(), DT_SUM);
      const auto start = Clock::now();
      comm.close();
      EXPECT_TRUE(recv->wait_until(Clock::now() + milliseconds(1000)));
      EXPECT_TRUE(collective->wait_until(Clock::now() + milliseconds(1000)));
      EXPECT_EQ(recv->status(), DT_ERR_ABORTED);
      EXPECT_EQ(collective->status(), DT_ERR_ABORTED);
      EXPECT_LT(Clock::now() - start, milliseconds(1000));
    }
    done.arrive_and_wait();
  });
}

TEST(UcxFaults, PeerThatLeavesFailsWhatWaitsOnIt) {
  std::latch posted(2);
  run_world(3, [&](comm::Communicator& comm) {
    if (comm.rank() == 2) {
      posted.arrive_and_wait();
      return;  // destroys its communicator, saying goodbye
    }
    if (comm.rank() == 0) {
      float x = 0;
      Tensor t(&x, 1, DType::f32);
      auto request = comm.recv(t.get(), 2, 1);
      posted.arrive_and_wait();
      const std::string message = expect_failure(comm, request, DT_ERR_REMOTE);
      EXPECT_NE(message.find("rank 2 has left"), std::string::npos) << message;
      return;
    }
    // Rank 1 is not waiting on rank 2 and carries on.
    std::this_thread::sleep_for(milliseconds(200));
    std::vector<float> x(10, 1.0f);
    Tensor t(x.data(), 10, DType::f32);
    wait(comm, comm.send(t.get(), 1, 8));
    wait(comm, comm.recv(t.get(), 1, 8));
  });
}

TEST(UcxFaults, TimeoutNamesTheSilentRank) {
  std::latch done(2);
  Board board(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      BoardRendezvous rendezvous(board, rank, 10000);
      auto backend = comm::make_ucx_backend(rendezvous, 10000);
      auto* ucx = dynamic_cast<comm::ucx::UcxBackend*>(backend.get());
      ASSERT_NE(ucx, nullptr);
      if (rank == 0) {
        std::vector<float> data(1000, 1.0f);
        TensorView view;
        view.data = data.data();
        view.count = 1000;
        auto request = ucx->allreduce(view, view, comm::ReduceOp::sum);
        EXPECT_FALSE(ucx->wait(request, Clock::now() + milliseconds(300)));
        EXPECT_EQ(ucx->unresponsive_ranks(*request), "rank 1");
        ucx->abort();
        EXPECT_TRUE(request->wait_until(Clock::now() + milliseconds(1000)));
        EXPECT_EQ(request->status(), DT_ERR_ABORTED);
      }
      done.arrive_and_wait();
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace dtrain::test
