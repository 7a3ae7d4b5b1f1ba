// Many operations outstanding at once: collectives complete in the order
// they were issued, point-to-point operations when matched.

#include <gtest/gtest.h>

#include <vector>

#include "harness.hpp"

namespace dtrain::test {
namespace {

TEST(UcxOrdering, CollectivesCompleteInIssueOrder) {
  run_world(3, [](comm::Communicator& comm) {
    const int n = comm.size();
    // A large one first, then small ones that would finish sooner on their own.
    const std::vector<std::int64_t> counts{1 << 20, 1, 100, 0, 5000, 1 << 18, 3, 77};
    std::vector<std::vector<float>> buffers;
    std::vector<std::unique_ptr<Tensor>> tensors;
    std::vector<comm::RequestPtr> requests;
    for (std::int64_t count : counts) {
      buffers.emplace_back(count, static_cast<float>(comm.rank() + 1));
      tensors.push_back(std::make_unique<Tensor>(buffers.back().data(), count, DType::f32));
      requests.push_back(comm.allreduce(tensors.back()->get(), tensors.back()->get(), DT_SUM));
    }
    requests.push_back(comm.barrier());
    // Whenever one is done, every earlier one is. Looking from the last to
    // the first, a pending operation seen after a done one was pending
    // when that one was already done.
    for (bool all_done = false; !all_done;) {
      all_done = true;
      int later_done = -1;
      for (int i = static_cast<int>(requests.size()) - 1; i >= 0; --i) {
        const bool done = requests[i]->done();
        if (!done && later_done >= 0) {
          ADD_FAILURE() << "operation " << later_done << " completed before operation " << i;
        }
        if (done && later_done < 0) later_done = i;
        all_done = all_done && done;
      }
    }
    for (auto& r : requests) wait(comm, r);
    const float want = static_cast<float>(n * (n + 1) / 2);
    for (std::size_t k = 0; k < counts.size(); ++k) {
      for (float v : buffers[k]) ASSERT_EQ(v, want) << "operation " << k;
    }
  });
}

TEST(UcxOrdering, PointToPointDoesNotWaitForCollectives) {
  run_world(2, [](comm::Communicator& comm) {
    std::vector<float> big(1 << 20, 1.0f);
    Tensor b(big.data(), big.size(), DType::f32);
    std::int32_t token = comm.rank() == 0 ? 42 : 0;
    Tensor t(&token, 1, DType::i32);
    if (comm.rank() == 0) {
      // The receive is posted after the collective, the send before it.
      auto s = comm.send(t.get(), 1, 9);
      auto a = comm.allreduce(b.get(), b.get(), DT_SUM);
      wait(comm, s);
      wait(comm, a);
    } else {
      auto a = comm.allreduce(b.get(), b.get(), DT_SUM);
      auto r = comm.recv(t.get(), 0, 9);
      wait(comm, r);
      wait(comm, a);
      EXPECT_EQ(token, 42);
    }
    EXPECT_EQ(big[12345], 2.0f);
  });
}

}  // namespace
}  // namespace dtrain::test
