// Two threads using one communicator at once (comm.h allows one at a time):
// the one that comes second gets DT_ERR_INVALID_USAGE naming both calls and
// the communicator breaks, so the first thread's call ends with an error
// too, never with DT_OK after the ranks' orders may have come apart.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "base/error.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

using std::chrono::milliseconds;

// Rank 0's first thread is inside a blocking allreduce that rank 1 joins
// late; its second thread starts a broadcast meanwhile.
TEST(ConcurrentUse, SecondThreadIsRefusedNamingBothCalls) {
  WorldOptions options;
  options.timeout_ms = 500;  // rank 1's wait for rank 0, which broke
  for (int run = 0; run < 20; ++run) {
    run_world(2, [&](comm::Communicator& comm) {
      float x = 1.0f;
      Tensor t(&x, 1, DType::f32);
      if (comm.rank() == 1) {
        std::this_thread::sleep_for(milliseconds(200));
        try {
          allreduce_now(comm, t, t, DT_SUM);
          EXPECT_EQ(x, 2.0f) << "run " << run << ": DT_OK with a wrong result";
        } catch (const Error&) {
          // Its partner's communicator broke: an error here is right.
        }
        return;
      }
      std::string first_outcome;
      std::thread first([&] {
        try {
          allreduce_now(comm, t, t, DT_SUM);
          first_outcome = "DT_OK";
        } catch (const Error& e) {
          first_outcome = e.what();
        }
      });
      std::this_thread::sleep_for(milliseconds(50));
      float y = 0.0f;
      Tensor u(&y, 1, DType::f32);
      const std::string message = expect_error(DT_ERR_INVALID_USAGE, [&] {
        comm::start_and_wait(comm, [&] { return comm.broadcast(u.get(), 0); });
      });
      first.join();
      EXPECT_NE(message.find("rank 0: broadcast called while another thread is in allreduce on the same "
                             "communicator"),
                std::string::npos)
          << message;
      EXPECT_NE(first_outcome.find("aborted"), std::string::npos) << "the first thread's allreduce: " << first_outcome;
      expect_error(DT_ERR_ABORTED, [&] { allreduce_now(comm, t, t, DT_SUM); });
    }, options);
  }
}

}  // namespace
}  // namespace dtrain::test
