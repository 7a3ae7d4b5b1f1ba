// A communicator belongs to one thread (comm.h, "Threads"): another thread's
// collectives are refused and change nothing, so two threads racing on one
// communicator never get a result paired with the wrong call on another
// rank; dt_comm_bind_thread() moves it, or lets threads take turns.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "common/world_fixture.hpp"

namespace {

using dtrain::testing::WorldFixture;

DLTensor f64(double* data, std::int64_t* shape) { return {data, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape, nullptr, 0}; }

// What a thread's calls came to.
struct Outcome {
  int ok = 0;
  int refused = 0;
  std::vector<std::string> wrong;  // a DT_OK with a value no correct pairing gives, or another status
};

class ThreadBinding : public WorldFixture {
 protected:
  // Sum over the ranks of (rank + 1) * scale: the allreduce of this rank's
  // (rank + 1) * scale when every rank contributes its own.
  double sum_of(double scale) const { return scale * size_ * (size_ + 1) / 2.0; }

  // `calls` blocking allreduces of (rank + 1) * scale(i), each checked.
  Outcome allreduces(int calls, double scale_base) {
    Outcome out;
    std::int64_t shape[1] = {1};
    for (int i = 0; i < calls; ++i) {
      const double scale = scale_base + i;
      double x = (rank_ + 1) * scale;
      DLTensor t = f64(&x, shape);
      const dt_status status = dt_allreduce(comm_, &t, &t, DT_SUM, nullptr, nullptr);
      if (status == DT_ERR_INVALID_USAGE && x == (rank_ + 1) * scale) {
        ++out.refused;
      } else if (status == DT_OK && x == sum_of(scale)) {
        ++out.ok;
      } else {
        out.wrong.push_back("call " + std::to_string(i) + ": status " + std::to_string(status) + ", value " +
                            std::to_string(x) + " (" + dt_error_last() + ")");
      }
    }
    return out;
  }
};

TEST_F(ThreadBinding, AnotherThreadsCallsAreRefusedAndChangeNothing) {
  std::int64_t shape[1] = {1};
  std::string message;
  int rank_seen = -1;
  dt_status split_status = DT_OK;
  std::thread other([&] {
    double x = 7.0;
    DLTensor t = f64(&x, shape);
    EXPECT_EQ(dt_allreduce(comm_, &t, &t, DT_SUM, nullptr, nullptr), DT_ERR_INVALID_USAGE);
    message = dt_error_last();
    EXPECT_EQ(x, 7.0);
    dt_request* req = nullptr;
    EXPECT_EQ(dt_broadcast(comm_, &t, 0, nullptr, &req), DT_ERR_INVALID_USAGE);
    EXPECT_EQ(req, nullptr);
    EXPECT_EQ(dt_barrier(comm_), DT_ERR_INVALID_USAGE);
    dt_comm* child = nullptr;
    split_status = dt_comm_split(&child, comm_, 0, 0);
    EXPECT_EQ(child, nullptr);
    // Local calls may come from any thread.
    EXPECT_EQ(dt_comm_rank(comm_, &rank_seen), DT_OK);
    dt_op_stats stats = DT_OP_STATS_INIT;
    EXPECT_EQ(dt_comm_stats(comm_, DT_OP_ALL, &stats), DT_OK);
    EXPECT_EQ(stats.count, 0);
  });
  other.join();
  EXPECT_EQ(split_status, DT_ERR_INVALID_USAGE);
  EXPECT_EQ(rank_seen, rank_);
  EXPECT_NE(message.find("rank " + std::to_string(rank_) + ": allreduce called on a thread other than the "
                         "communicator's"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("dt_comm_bind_thread"), std::string::npos) << message;
  // The communicator is as it was: its own thread goes on.
  Outcome mine = allreduces(3, 1.0);
  EXPECT_EQ(mine.ok, 3);
  EXPECT_TRUE(mine.wrong.empty()) << mine.wrong.front();
}

TEST_F(ThreadBinding, TheRefusalNamesTheCallTheCommunicatorsThreadIsIn) {
  std::int64_t shape[1] = {1};
  std::string message;
  std::thread other([&] {
    // Until the communicator's thread is inside its receive (from this rank
    // itself, which never sends), then aborted.
    for (int i = 0; i < 1000 && message.find("which is in recv") == std::string::npos; ++i) {
      EXPECT_EQ(dt_barrier(comm_), DT_ERR_INVALID_USAGE);
      message = dt_error_last();
      if (message.find("which is in recv") == std::string::npos) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(dt_comm_abort(comm_), DT_OK);
  });
  double y = 0.0;
  DLTensor u = f64(&y, shape);
  EXPECT_EQ(dt_recv(comm_, &u, rank_, 7, nullptr, nullptr), DT_ERR_ABORTED);
  other.join();
  EXPECT_NE(message.find("barrier called on a thread other than the communicator's"), std::string::npos) << message;
  EXPECT_NE(message.find("which is in recv"), std::string::npos) << message;
}

// The race that pairs wrong buffers when nothing stops it: two threads of
// each rank call allreduces with values of their own, in whatever order the
// scheduler gives on each rank, beside the communicator's own thread.
TEST_F(ThreadBinding, TwoThreadsRacingNeverGetAWrongResult) {
  for (int run = 0; run < 100; ++run) {
    Outcome a, b, mine;
    std::atomic<bool> go{false};
    std::thread first([&] {
      while (!go.load()) std::this_thread::yield();
      a = allreduces(50, 1000.0);
    });
    std::thread second([&] {
      while (!go.load()) std::this_thread::yield();
      b = allreduces(50, 2000.0);
    });
    go.store(true);
    mine = allreduces(5, 3000.0 + 10.0 * run);
    first.join();
    second.join();
    ASSERT_TRUE(a.wrong.empty()) << "run " << run << ", first thread, " << a.wrong.front();
    ASSERT_TRUE(b.wrong.empty()) << "run " << run << ", second thread, " << b.wrong.front();
    ASSERT_TRUE(mine.wrong.empty()) << "run " << run << ", the communicator's thread, " << mine.wrong.front();
    EXPECT_EQ(a.refused + b.refused, 100) << "run " << run;
    EXPECT_EQ(mine.ok, 5) << "run " << run;
  }
}

TEST_F(ThreadBinding, BindingMovesTheCommunicatorToAWorker) {
  Outcome in_worker;
  std::thread worker([&] {
    ASSERT_EQ(dt_comm_bind_thread(comm_, 1), DT_OK) << dt_error_last();
    in_worker = allreduces(4, 10.0);
  });
  worker.join();
  EXPECT_EQ(in_worker.ok, 4);
  EXPECT_TRUE(in_worker.wrong.empty()) << in_worker.wrong.front();
  // The creating thread lost it to the worker (which has ended) until it binds it back.
  Outcome refused = allreduces(1, 20.0);
  EXPECT_EQ(refused.refused, 1);
  ASSERT_EQ(dt_comm_bind_thread(comm_, 1), DT_OK);
  Outcome back = allreduces(2, 30.0);
  EXPECT_EQ(back.ok, 2);
}

TEST_F(ThreadBinding, UnboundThreadsTakeTurns) {
  ASSERT_EQ(dt_comm_bind_thread(comm_, 0), DT_OK);
  for (int turn = 0; turn < 3; ++turn) {
    Outcome in_worker;
    std::thread worker([&] { in_worker = allreduces(2, 100.0 * turn); });
    worker.join();
    Outcome mine = allreduces(2, 100.0 * turn + 50.0);
    EXPECT_EQ(in_worker.ok, 2) << "turn " << turn;
    EXPECT_EQ(mine.ok, 2) << "turn " << turn;
  }
}

TEST_F(ThreadBinding, ARequestMayBeWaitedForOnAnyThread) {
  std::int64_t shape[1] = {1};
  double x = rank_ + 1.0;
  DLTensor t = f64(&x, shape);
  dt_request* req = nullptr;
  ASSERT_EQ(dt_allreduce(comm_, &t, &t, DT_SUM, nullptr, &req), DT_OK) << dt_error_last();
  dt_status waited = DT_ERR_INTERNAL;
  std::thread waiter([&] { waited = dt_request_wait(req, 30000); });
  waiter.join();
  EXPECT_EQ(waited, DT_OK);
  EXPECT_EQ(x, sum_of(1.0));
  dt_request_free(req);
}

TEST_F(ThreadBinding, ANullCommunicatorIsAnInvalidArgument) {
  EXPECT_EQ(dt_comm_bind_thread(nullptr, 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("comm"), std::string::npos) << dt_error_last();
}

}  // namespace
