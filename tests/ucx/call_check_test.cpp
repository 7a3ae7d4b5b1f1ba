// The comparison of calls across ranks (comm/call_check.hpp, turned on by
// DTRAIN_CHECK_COLLECTIVES=1): ranks that disagree about a broadcast's
// root, the kind of collective, or that skip one, all get DT_ERR_MISMATCH
// at once, naming each rank's call, where they would otherwise return wrong
// buffers with DT_OK or wait out the deadline. Worlds of 2, 3 and 4 ranks.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

using Clock = std::chrono::steady_clock;

class CallCheck : public ::testing::TestWithParam<int> {
 protected:
  // Communicators read the variable when they are made, inside run_world.
  void SetUp() override { ::setenv("DTRAIN_CHECK_COLLECTIVES", "1", 1); }
  void TearDown() override { ::unsetenv("DTRAIN_CHECK_COLLECTIVES"); }

  // A deadline far beyond what a refusal takes: waiting it out is the failure.
  WorldOptions options() const {
    WorldOptions o;
    o.timeout_ms = 20000;
    return o;
  }
};

// Runs `call` blocking and returns its refusal's message, which must be
// DT_ERR_MISMATCH and come well before the deadline.
template <typename Call>
std::string refused(Call&& call) {
  const auto start = Clock::now();
  const std::string message = expect_error(DT_ERR_MISMATCH, call);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5)) << message;
  return message;
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' missing from: " << message;
}

// Every rank can go on: a mismatch found before the collective started
// leaves the communicator as it was, the ranks in step.
void expect_usable(comm::Communicator& comm) {
  float x = 1.0f;
  Tensor t(&x, 1, DType::f32);
  allreduce_now(comm, t, t, DT_SUM);
  EXPECT_EQ(x, static_cast<float>(comm.size()));
}

TEST_P(CallCheck, BroadcastRootsThatDisagree) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    std::vector<float> data(16, static_cast<float>(comm.rank()));
    Tensor buf(data.data(), 16, DType::f32);
    const int root = comm.rank() == 0 ? 0 : 1;
    const std::string message = refused([&] {
      comm::start_and_wait(comm, [&] { return comm.broadcast(buf.get(), root); });
    });
    expect_contains(message, "ranks disagree about collective #1: rank 0 called broadcast(16 float32, root 0), ");
    expect_contains(message, comm.size() == 2 ? "rank 1 called broadcast(16 float32, root 1)"
                                              : "all called broadcast(16 float32, root 1)");
    EXPECT_EQ(data, std::vector<float>(16, static_cast<float>(comm.rank()))) << "the buffer changed";
    expect_usable(comm);
  }, options());
}

TEST_P(CallCheck, KindsThatDisagree) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    const int n = comm.size();
    std::vector<float> send(4096, 1.0f), recv(4096 * static_cast<std::size_t>(n), 0.0f);
    Tensor s(send.data(), 4096, DType::f32);
    Tensor r(recv.data(), comm.rank() == 0 ? 4096 : 4096 * n, DType::f32);
    const std::string message = refused([&] {
      comm::start_and_wait(comm, [&] {
        return comm.rank() == 0 ? comm.allreduce(s.get(), r.get(), DT_SUM) : comm.allgather(s.get(), r.get());
      });
    });
    expect_contains(message, "rank 0 called allreduce(4096 float32, sum), ");
    expect_contains(message, "called allgather(4096 float32)");
    expect_usable(comm);
  }, options());
}

// The last rank skips a broadcast: its next collective meets the others'
// broadcast, and every rank is told so, instead of a result from the wrong
// call or a wait for the one that never comes.
TEST_P(CallCheck, ASkippedCollective) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    const bool skips = comm.rank() == comm.size() - 1;
    float x = 1.0f;
    Tensor t(&x, 1, DType::f32);
    allreduce_now(comm, t, t, DT_SUM);
    const std::string message = refused([&] {
      if (!skips) comm::start_and_wait(comm, [&] { return comm.broadcast(t.get(), 0); });
      allreduce_now(comm, t, t, DT_SUM);
    });
    expect_contains(message, "ranks disagree about collective #2: ");
    expect_contains(message, "called broadcast(1 float32, root 0), rank " + std::to_string(comm.size() - 1) +
                                 " called allreduce(1 float32, sum)");
  }, options());
}

// A non-blocking caller's collective is queued before the calls are
// compared: the mismatch is reported when it is waited for, and breaks the
// communicator.
TEST_P(CallCheck, NonBlockingDisagreementBreaksTheCommunicator) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    std::vector<float> data(64, 1.0f);
    Tensor buf(data.data(), comm.rank() == 0 ? 64 : 32, DType::f32);
    auto request = comm.broadcast(buf.get(), 0);
    const std::string message = refused([&] { comm.wait(request, -1); });
    expect_contains(message, "rank 0 called broadcast(64 float32, root 0)");
    expect_contains(message, "called broadcast(32 float32, root 0)");
    expect_error(DT_ERR_ABORTED, [&] { comm.wait(comm.barrier(), -1); });
  }, options());
}

INSTANTIATE_TEST_SUITE_P(Worlds, CallCheck, ::testing::Values(2, 3, 4),
                         [](const auto& world) { return std::to_string(world.param) + "ranks"; });

}  // namespace
}  // namespace dtrain::test
