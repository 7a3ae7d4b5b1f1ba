// Misuse and bad input: each refusal has its documented status, changes
// nothing, and leaves the Zero usable; ranks that disagree all fail with
// DT_ERR_MISMATCH instead of hanging; stage 3 prefetches in the direction
// of the gathers; a broken communicator fails what communicates.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "ddp/tensors.hpp"
#include "device/probe.hpp"
#include "model.hpp"
#include "parallel/zero/zero.hpp"
#include "ucx/harness.hpp"
#include "common/parsed_tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::zero::GatherState;
using parallel::zero::Zero;

const std::vector<std::int64_t> kCounts{5, 7, 3, 4};

parallel::zero::Options stage(int s) {
  parallel::zero::Options options;
  options.stage = s;
  options.bucket_bytes = 16;  // stages 0-2: several units
  return options;
}

Caught create_error(comm::Communicator& comm, FlatParameters& params, const parallel::zero::Options& options) {
  return catch_error([&] { Zero zero(comm, testing::parsed(params.pointers(), "params"), optim::Config{}, options); });
}

bool mentions(const Caught& caught, const std::string& text) { return caught.message.find(text) != std::string::npos; }

// One full micro-step with every gradient marked, and a step.
void train_once(Zero& zero) {
  for (std::size_t u = zero.unit_count(); u-- > 0;) {
    zero.gather(u);
    zero.gather_wait(u, -1);
    zero.release(u);
  }
  for (std::size_t i = zero.parameter_count(); i-- > 0;) {
    zero.gradient(i);
    zero.mark_ready(i);
  }
  zero.wait(-1);
  zero.step();
}

TEST(ZeroCreation, RefusesBadArguments) {
  run_world(1, [](comm::Communicator& comm) {
    FlatParameters params(kCounts, DType::f32);
    Caught c = create_error(comm, params, stage(5));
    EXPECT_EQ(c.status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(mentions(c, "stage = 5")) << c.message;

    parallel::zero::Options units = stage(3);
    units.unit_sizes = std::vector<std::size_t>{2, 1};
    c = create_error(comm, params, units);
    EXPECT_EQ(c.status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(mentions(c, "add up to 3")) << c.message;
    units.unit_sizes = std::vector<std::size_t>{2, 0, 2};
    EXPECT_EQ(create_error(comm, params, units).status, DT_ERR_INVALID_ARGUMENT);
    units.unit_sizes = std::vector<std::size_t>{2, 3};
    EXPECT_EQ(create_error(comm, params, units).status, DT_ERR_INVALID_ARGUMENT);

    parallel::zero::Options staged = stage(1);
    staged.unit_sizes = std::vector<std::size_t>{2, 1};
    c = create_error(comm, params, staged);
    EXPECT_EQ(c.status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(mentions(c, "add up to 3")) << c.message;

    parallel::zero::Options buckets = stage(2);
    buckets.bucket_bytes = 0;
    EXPECT_EQ(create_error(comm, params, buckets).status, DT_ERR_INVALID_ARGUMENT);

    params.tensor(2).dtype = dtype_to_dlpack(DType::bf16);
    c = create_error(comm, params, stage(1));
    EXPECT_EQ(c.status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(mentions(c, "same dtype")) << c.message;
    params.tensor(2).dtype = dtype_to_dlpack(DType::i32);
    EXPECT_EQ(create_error(comm, params, stage(1)).status, DT_ERR_INVALID_ARGUMENT);
    params.tensor(2).dtype = dtype_to_dlpack(DType::f32);

    // CUDA memory: refused without a device, and beside host memory anywhere.
    params.tensor(1).device = {kDLCUDA, 0};
    EXPECT_EQ(create_error(comm, params, stage(1)).status,
              device::cuda_device_count() > 0 ? DT_ERR_INVALID_ARGUMENT : DT_ERR_UNSUPPORTED);
    params.tensor(1).device = {kDLCPU, 0};

    EXPECT_EQ(catch_error([&] { Zero zero(comm, std::vector<CheckedTensor>{}, optim::Config{}, stage(1)); }).status, DT_ERR_INVALID_ARGUMENT);

    // The communicator is still in step: a good creation works.
    EXPECT_EQ(create_error(comm, params, stage(1)).status, DT_OK);
  });
}

TEST(ZeroCreation, RanksThatDisagreeAllFailWithMismatch) {
  for (int ranks : {2, 3}) {
    run_world(ranks, [&](comm::Communicator& comm) {
      const bool last = comm.rank() == comm.size() - 1;
      FlatParameters params(kCounts, DType::f32);
      Caught c = create_error(comm, params, stage(last ? 2 : 1));
      EXPECT_EQ(c.status, DT_ERR_MISMATCH);
      EXPECT_TRUE(mentions(c, "stage")) << c.message;

      FlatParameters other(last ? std::vector<std::int64_t>{5, 7, 4, 3} : kCounts, DType::f32);
      c = create_error(comm, other, stage(1));
      EXPECT_EQ(c.status, DT_ERR_MISMATCH);
      EXPECT_TRUE(mentions(c, "parameter 2")) << c.message;

      // One rank's own refusal: it says why, the others name it.
      c = create_error(comm, params, stage(last ? 7 : 1));
      EXPECT_EQ(c.status, last ? DT_ERR_INVALID_ARGUMENT : DT_ERR_MISMATCH) << c.message;

      parallel::zero::Options units = stage(3);
      if (last) units.unit_sizes = std::vector<std::size_t>{1, 3};
      EXPECT_EQ(create_error(comm, params, units).status, DT_ERR_MISMATCH);

      optim::Config config;
      if (last) config.adamw.lr = 0.5f;
      c = catch_error([&] { Zero zero(comm, testing::parsed(params.pointers(), "params"), config, stage(1)); });
      EXPECT_EQ(c.status, DT_ERR_MISMATCH);
      EXPECT_TRUE(mentions(c, "optimizer")) << c.message;

      EXPECT_EQ(create_error(comm, params, stage(1)).status, DT_OK);
    });
  }
}

TEST(ZeroUsage, RefusesMisuseAndChangesNothing) {
  run_world(2, [](comm::Communicator& comm) {
    for (int s = 0; s <= 3; ++s) {
      FlatParameters params(kCounts, DType::f32);
      Zero zero(comm, testing::parsed(params.pointers(), "params"), optim::Config{}, stage(s));
      const std::size_t n = kCounts.size();
      EXPECT_EQ(catch_error([&] { zero.gradient(n); }).status, DT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(catch_error([&] { zero.mark_ready(n); }).status, DT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(catch_error([&] { zero.parameter(n); }).status, DT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(catch_error([&] { zero.gather(zero.unit_count()); }).status, DT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(catch_error([&] { zero.gather_wait(zero.unit_count(), -1); }).status, DT_ERR_INVALID_ARGUMENT);
      EXPECT_EQ(catch_error([&] { zero.release(zero.unit_count()); }).status, DT_ERR_INVALID_ARGUMENT);

      zero.gradient(0);
      zero.mark_ready(0);
      EXPECT_EQ(catch_error([&] { zero.mark_ready(0); }).status, DT_ERR_INVALID_USAGE);
      EXPECT_EQ(catch_error([&] { zero.gradient(0); }).status, DT_ERR_INVALID_USAGE);
      EXPECT_EQ(catch_error([&] { zero.set_sync(false); }).status, DT_ERR_INVALID_USAGE);
      EXPECT_EQ(catch_error([&] { zero.step(); }).status, DT_ERR_INVALID_USAGE);
      // Gradients 1.. never marked: the micro-step is abandoned, on every rank alike.
      const Caught unmarked = catch_error([&] { zero.wait(-1); });
      EXPECT_EQ(unmarked.status, DT_ERR_INVALID_USAGE);
      EXPECT_TRUE(mentions(unmarked, "gradients 1, 2, 3 were never marked")) << unmarked.message;
      EXPECT_EQ(catch_error([&] { zero.step(); }).status, DT_ERR_INVALID_USAGE);

      // A micro-step with sync off must be followed by one with sync on.
      zero.set_sync(false);
      for (std::size_t i = n; i-- > 0;) zero.mark_ready(i);
      zero.wait(-1);
      EXPECT_EQ(catch_error([&] { zero.step(); }).status, DT_ERR_INVALID_USAGE);
      zero.set_sync(true);
      for (std::size_t i = n; i-- > 0;) zero.mark_ready(i);
      zero.wait(-1);
      EXPECT_EQ(catch_error([&] { zero.step(); }).status, DT_OK);

      if (s == 3) {
        const Caught ungathered = catch_error([&] { zero.parameter(1); });
        EXPECT_EQ(ungathered.status, DT_ERR_INVALID_USAGE);
        EXPECT_TRUE(mentions(ungathered, "not gathered")) << ungathered.message;
        EXPECT_EQ(catch_error([&] { zero.release(1); }).status, DT_ERR_INVALID_USAGE);
        zero.gather(1);
        zero.gather_wait(1, -1);
        EXPECT_EQ(catch_error([&] { zero.parameter(1); }).status, DT_OK);
        const Caught gathered = catch_error([&] { zero.step(); });
        EXPECT_EQ(gathered.status, DT_ERR_INVALID_USAGE);
        EXPECT_TRUE(mentions(gathered, "still gathered")) << gathered.message;
        zero.release(1);
        if (zero.gather_state(2) != GatherState::released) zero.release(2);  // the prefetched one
      } else {
        EXPECT_EQ(catch_error([&] { zero.parameter(1); }).status, DT_OK);
        EXPECT_EQ(catch_error([&] { zero.release(0); }).status, DT_OK);
      }
      train_once(zero);
    }
  });
}

TEST(ZeroGather, PrefetchFollowsTheDirectionOfTheGathers) {
  run_world(2, [](comm::Communicator& comm) {
    FlatParameters params(kCounts, DType::bf16);
    Zero zero(comm, testing::parsed(params.pointers(), "params"), optim::Config{}, stage(3));
    ASSERT_EQ(zero.unit_count(), 4u);
    // Forward: each gather starts the next unit's.
    for (std::size_t u = 0; u < 4; ++u) {
      zero.gather(u);
      if (u + 1 < 4) {
        EXPECT_NE(zero.gather_state(u + 1), GatherState::released) << "unit " << u + 1;
      }
      zero.gather_wait(u, -1);
      EXPECT_EQ(zero.gather_state(u), GatherState::whole);
      zero.release(u);
      EXPECT_EQ(zero.gather_state(u), GatherState::released);
    }
    // Backward starts where forward ended, which turns the direction around.
    for (std::size_t u = 4; u-- > 0;) {
      zero.gather(u);
      if (u > 0) {
        EXPECT_NE(zero.gather_state(u - 1), GatherState::released) << "unit " << u - 1;
      }
      if (u + 1 < 4) {
        EXPECT_EQ(zero.gather_state(u + 1), GatherState::released) << "unit " << u + 1;
      }
      zero.gather_wait(u, -1);
      zero.release(u);
    }
    for (std::size_t u = 0; u < 4; ++u) EXPECT_EQ(zero.gather_state(u), GatherState::released);
  });
}

TEST(ZeroGather, WithoutPrefetchOnlyTheAskedUnitIsGathered) {
  run_world(2, [](comm::Communicator& comm) {
    FlatParameters params(kCounts, DType::f32);
    parallel::zero::Options options = stage(3);
    options.prefetch = false;
    Zero zero(comm, testing::parsed(params.pointers(), "params"), optim::Config{}, options);
    zero.gather(0);
    EXPECT_EQ(zero.gather_state(1), GatherState::released);
    zero.gather_wait(0, -1);
    zero.release(0);
  });
}

TEST(ZeroUsage, ABrokenCommunicatorFailsWhatCommunicates) {
  run_world(1, [](comm::Communicator& comm) {
    FlatParameters params(kCounts, DType::f32);
    Zero zero(comm, testing::parsed(params.pointers(), "params"), optim::Config{}, stage(2));
    comm.abort();
    const Caught c = catch_error([&] {
      for (std::size_t i = kCounts.size(); i-- > 0;) zero.mark_ready(i);
      zero.wait(-1);
    });
    EXPECT_EQ(c.status, DT_ERR_ABORTED) << c.message;
    EXPECT_EQ(catch_error([&] { zero.step(); }).status, DT_ERR_INVALID_USAGE);
  });
}

// An inf in one rank's gradient makes every rank skip the step: the norm is
// summed over all shards. Nothing changes but the loss scale, which halves.
TEST(ZeroStep, AnInfOnOneRankSkipsTheStepEverywhere) {
  run_world(2, [](comm::Communicator& comm) {
    for (int s = 0; s <= 3; ++s) {
      FlatParameters params(kCounts, DType::f32);
      optim::Config config;
      config.loss_scale.initial_scale = 1024.0f;
      config.loss_scale.dynamic = true;
      Zero zero(comm, testing::parsed(params.pointers(), "params"), config, stage(s));
      for (std::size_t i = kCounts.size(); i-- > 0;) {
        const TensorView gradient = zero.gradient(i);
        static_cast<float*>(gradient.data)[0] = comm.rank() == 1 && i == 2 ? INFINITY : 1.0f;
        zero.mark_ready(i);
      }
      zero.wait(-1);
      const optim::StepResult result = zero.step();
      EXPECT_TRUE(result.skipped) << "stage " << s;
      EXPECT_EQ(result.steps, 0);
      EXPECT_EQ(zero.loss_scale(), 512.0f);
      train_once(zero);  // the gradients were zeroed: the next step is clean
      EXPECT_EQ(zero.loss_scale(), 512.0f);
    }
  });
}

// Backward engines mark gradients from several threads, in any order; the
// units still launch in the same order on every rank and the result is the
// plain average.
TEST(ZeroThreads, GradientsMarkedFromSeveralThreads) {
  run_world(2, [](comm::Communicator& comm) {
    for (int s = 0; s <= 3; ++s) {
      const std::vector<std::int64_t> counts(12, 10);
      FlatParameters params(counts, DType::f32);
      optim::Config sgd;
      sgd.kind = optim::Kind::sgd;
      sgd.sgd.lr = 1.0f;
      parallel::zero::Options options = stage(s);
      options.bucket_bytes = 40;  // stages 0-2: a unit per parameter
      Zero zero(comm, testing::parsed(params.pointers(), "params"), sgd, options);
      std::vector<std::thread> threads;
      for (std::size_t t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
          for (std::size_t i = t; i < counts.size(); i += 4) {
            const TensorView gradient = zero.gradient(i);
            for (std::int64_t k = 0; k < gradient.count; ++k) {
              static_cast<float*>(gradient.data)[k] = static_cast<float>((comm.rank() + 1) * (i + 1));
            }
            zero.mark_ready(i);
          }
        });
      }
      for (std::thread& thread : threads) thread.join();
      zero.wait(-1);
      zero.step();
      for (std::size_t u = 0; u < zero.unit_count(); ++u) zero.gather_wait(u, -1);
      for (std::size_t i = 0; i < counts.size(); ++i) {
        const TensorView param = zero.parameter(i);
        EXPECT_EQ(static_cast<const float*>(param.data)[0], -1.5f * static_cast<float>(i + 1)) << "stage " << s;
      }
      for (std::size_t u = 0; u < zero.unit_count(); ++u) zero.release(u);
    }
  });
}

// A rank whose peer never reduces gives up at its deadline, and the broken
// communicator fails every later collective with DT_ERR_ABORTED.
TEST(ZeroUsage, AWaitForASilentPeerEndsAtItsDeadline) {
  run_world(2, [](comm::Communicator& comm) {
    FlatParameters params(kCounts, DType::f32);
    Zero zero(comm, testing::parsed(params.pointers(), "params"), optim::Config{}, stage(2));
    if (comm.rank() == 1) {  // stays, but never reduces
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return;
    }
    for (std::size_t i = kCounts.size(); i-- > 0;) zero.mark_ready(i);
    const auto start = std::chrono::steady_clock::now();
    const Caught timeout = catch_error([&] { zero.wait(300); });
    EXPECT_EQ(timeout.status, DT_ERR_TIMEOUT) << timeout.message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    const Caught aborted = catch_error([&] {
      for (std::size_t i = kCounts.size(); i-- > 0;) zero.mark_ready(i);
    });
    EXPECT_EQ(aborted.status, DT_ERR_ABORTED) << aborted.message;
  });
}

}  // namespace
}  // namespace dtrain::test
