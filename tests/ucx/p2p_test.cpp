#include <gtest/gtest.h>

#include <vector>

#include "harness.hpp"

namespace dtrain::test {
namespace {

TEST(UcxSmoke, AllreduceSum) {
  for (int n : {1, 2, 3, 4}) {
    run_world(n, [n](comm::Communicator& comm) {
      std::vector<float> data(1000, static_cast<float>(comm.rank() + 1));
      Tensor t(data.data(), 1000, DType::f32);
      wait(comm, comm.allreduce(t.get(), t.get(), DT_SUM));
      EXPECT_EQ(data[999], n * (n + 1) / 2.0f);
    });
  }
}

}  // namespace
}  // namespace dtrain::test
