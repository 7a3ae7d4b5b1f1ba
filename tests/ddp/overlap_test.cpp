// A bucket's allreduce starts as soon as its gradients are marked and runs
// while the rest of backward does: with a pause between the gradients of
// the last layer and the first, the first bucket is already reduced before
// the last gradient is marked, with no wait() called yet.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "mlp.hpp"
#include "parallel/ddp/data_parallel.hpp"
#include "tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::ddp::BucketState;
using parallel::ddp::DataParallel;
using parallel::ddp::Options;

class Overlap : public ::testing::TestWithParam<int> {};

TEST_P(Overlap, FirstBucketIsReducedBeforeBackwardEnds) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    Mlp model(7);
    TensorList grads;
    const auto shapes = Mlp::shapes();
    for (std::size_t t = 0; t < shapes.size(); ++t) grads.add(model.grads[t], DType::f32, shapes[t]);
    Options options;
    options.bucket_bytes = 1;  // one gradient per bucket
    DataParallel ddp(comm, grads.get(), options);
    ASSERT_EQ(ddp.bucket_count(), 4u);
    const std::size_t first_bucket = ddp.bucket_of(3);  // the last layer's bias, ready first
    const std::size_t last_bucket = ddp.bucket_of(0);
    EXPECT_EQ(first_bucket, 0u);
    EXPECT_EQ(last_bucket, 3u);

    bool reduced_before_last = false;
    model.accumulate(Batch::make(4, 1), 0.25f, [&](std::size_t i) {
      if (i == 0) {
        // The rest of backward is still "running": give the first bucket
        // time to finish on its own.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (ddp.bucket_state(first_bucket) != BucketState::reduced &&
               std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        reduced_before_last = ddp.bucket_state(first_bucket) == BucketState::reduced;
        EXPECT_EQ(ddp.bucket_state(last_bucket), BucketState::waiting);
      }
      ddp.mark_ready(i);
      if (i == 3) {
        EXPECT_NE(ddp.bucket_state(first_bucket), BucketState::waiting);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
    EXPECT_TRUE(reduced_before_last) << "the first bucket's allreduce did not complete during backward";
    ddp.wait();
    for (std::size_t b = 0; b < ddp.bucket_count(); ++b) EXPECT_EQ(ddp.bucket_state(b), BucketState::waiting);
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, Overlap, ::testing::Values(2, 3),
                         [](const auto& param_info) { return std::to_string(param_info.param) + "_ranks"; });

}  // namespace
}  // namespace dtrain::test
