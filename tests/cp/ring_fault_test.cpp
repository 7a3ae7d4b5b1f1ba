// A rank that dies in the middle of a ring attention call is reported, with
// its rank, by every other rank's call, within the communicator's deadline;
// none hangs. CTest runs this under dtrun with 3 and 4 ranks; the
// communicators have a deadline of kDeadlineMs.
//
// The victim runs its rank in a gtest death-test child: the child joins the
// world, starts the forward call on a second thread and, once the call's
// first block (its own keys and values) has written every element of `o`
// (the ring's first shift is then under way), kills itself with SIGKILL. The death test's parent checks
// that it was SIGKILL and exits 0, so dtrun sees every rank succeed and only
// the survivors' own checks decide the outcome. Alone (no launcher) it skips.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "cp/reference_attention.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::random_values;
using dtrain::testing::TensorOf;
using Clock = std::chrono::steady_clock;

constexpr int kVictim = 1;
// Enough rows that one block's attention takes a good part of a second on a
// busy machine, so the victim dies while its neighbours are still at work.
constexpr std::int64_t kRows = 512;
constexpr std::int64_t kHeads = 8;
constexpr std::int64_t kHeadDim = 64;
// The communicators' deadline, short beside the default 300 s, but long
// enough for the rendezvous it also bounds, which waits for the victim's
// death-test child to start (seconds under AddressSanitizer on a busy machine).
constexpr int kDeadlineMs = 10000;

int env_int(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::atoi(value) : -1;
}

// This rank's world, with the short deadline.
dt_status join_world(dt_comm** comm) {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.timeout_ms = kDeadlineMs;
  return dt_comm_create(comm, &opts);
}

// One rank's shard and its forward call.
struct RingCall {
  std::vector<float> q, k, v, o, lse;
  explicit RingCall(int rank)
      : q(random_values(count(), 10 + rank)), k(random_values(count(), 20 + rank)),
        v(random_values(count(), 30 + rank)), o(count(), std::numeric_limits<float>::quiet_NaN()),
        lse(static_cast<std::size_t>(kRows * kHeads)) {}
  static std::size_t count() { return static_cast<std::size_t>(kRows * kHeads * kHeadDim); }

  dt_status forward(dt_comm* comm) {
    TensorOf<float> tq(q, {kRows, kHeads, kHeadDim}), tk(k, {kRows, kHeads, kHeadDim}),
        tv(v, {kRows, kHeads, kHeadDim}), to(o, {kRows, kHeads, kHeadDim}), tl(lse, {kRows, kHeads});
    return dt_cp_ring_attention_forward(comm, DT_CP_ZIGZAG, 1, 0.0, tq.get(), tk.get(), tv.get(), to.get(),
                                        tl.get());
  }

  // Whether every element of `o` has been written, which the call's first
  // block does (this rank's own, where every query sees at least itself).
  // Reads through atomic_ref since the call's thread is writing meanwhile.
  bool first_block_done() {
    for (float& e : o) {
      if (std::isnan(std::atomic_ref<float>(e).load(std::memory_order_relaxed))) return false;
    }
    return true;
  }
};

// The victim's rank: never returns.
[[noreturn]] void die_mid_ring() {
  dt_comm* comm = nullptr;
  if (join_world(&comm) != DT_OK) {
    std::fprintf(stderr, "victim: %s\n", dt_error_last());
    std::exit(1);
  }
  RingCall call(kVictim);
  std::thread ring([&] { call.forward(comm); });
  const auto give_up = Clock::now() + std::chrono::seconds(20);
  while (!call.first_block_done() && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::microseconds(200));
  if (!call.first_block_done()) {
    std::fprintf(stderr, "victim: its first block never finished\n");
    std::exit(1);
  }
  raise(SIGKILL);
  std::abort();  // unreachable: SIGKILL cannot be caught
}

TEST(CpRingFault, PeerKilledMidRingIsNamedByEveryOtherRank) {
  const int rank = env_int("DTRAIN_RANK");
  const int size = env_int("DTRAIN_WORLD_SIZE");
  if (rank < 0 || size < 3) GTEST_SKIP() << "needs 3 ranks or more under dtrun (a ring with two survivors)";
  if (rank == kVictim) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(die_mid_ring(), ::testing::KilledBySignal(SIGKILL), "");
    return;
  }

  dt_comm* comm = nullptr;
  ASSERT_EQ(join_world(&comm), DT_OK) << dt_error_last();
  RingCall call(rank);
  const auto start = Clock::now();
  const dt_status status = call.forward(comm);
  const std::string message = dt_error_last();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("ring forward ended after %.2f s with %s: %s\n", seconds, dt_status_string(status), message.c_str());

  EXPECT_TRUE(status == DT_ERR_REMOTE || status == DT_ERR_TIMEOUT || status == DT_ERR_ABORTED)
      << dt_status_string(status) << ": " << message;
  EXPECT_NE(message.find("rank " + std::to_string(kVictim)), std::string::npos) << message;
  // Within the deadline, the victim's first block included: the loss of a
  // process is noticed without waiting the deadline out.
  EXPECT_LT(seconds, kDeadlineMs / 1000.0);
  EXPECT_EQ(dt_comm_destroy(comm), DT_OK);
}

}  // namespace
