// ZeRO through the C API, one process per rank: a linear model y = W x + b
// with a squared-error loss, trained by dt_zero (SGD with momentum) in each
// stage on each rank's share of a deterministic batch, against the same
// model trained by one process on the whole batch with a dt_optimizer,
// which every rank also computes. Ranks start from different weights; the
// dt_zero takes rank 0's. Then a checkpoint saved and loaded again, bad
// arguments and misuse, and refusals that must reach every rank instead of
// hanging.
//
// CTest runs this under dtrun with 2 and 3 ranks, and alone as a world of one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/linear_model.hpp"
#include "common/world_fixture.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::accumulate;
using dtrain::testing::initialise;
using Tensors = dtrain::testing::LinearTensors;

constexpr int kSteps = 4;
constexpr int kPerRank = 4;

// The mean over samples [first, last) of the loss's gradient.
void gradient(const Tensors& params, int step, int first, int last, Tensors& grads) {
  std::fill(grads.w.begin(), grads.w.end(), 0.0f);
  std::fill(grads.b.begin(), grads.b.end(), 0.0f);
  accumulate(params, step, first, last, 1.0, grads);
}

dt_optimizer_options sgd() {
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.kind = DT_OPTIM_SGD;
  opts.lr = 0.1f;
  opts.momentum = 0.9f;
  return opts;
}

double relative_error(Tensors& a, Tensors& b) {
  double diff = 0, scale = 0;
  for (int t = 0; t < 2; ++t) {
    for (std::size_t k = 0; k < a.values(t).size(); ++k) {
      diff = std::max(diff, std::fabs(static_cast<double>(a.values(t)[k]) - b.values(t)[k]));
      scale = std::max(scale, std::fabs(static_cast<double>(b.values(t)[k])));
    }
  }
  return diff / scale;
}

class CapiRanks : public dtrain::testing::WorldFixture {
 protected:
  dt_zero* create(int stage) {
    Tensors params;
    initialise(params, rank_);
    dt_zero_options opts = DT_ZERO_OPTIONS_INIT;
    opts.stage = stage;
    opts.bucket_bytes = 1;  // stages 0-2: a unit per parameter
    const dt_optimizer_options optim = sgd();
    dt_zero* z = nullptr;
    EXPECT_EQ(dt_zero_create(&z, comm_, params.pointers, 2, &optim, &opts), DT_OK) << dt_error_last();
    return z;
  }

  // Every parameter's values, gathered unit by unit.
  void read(dt_zero* z, Tensors& into) {
    size_t units = 0;
    ASSERT_EQ(dt_zero_unit_count(z, &units), DT_OK);
    ASSERT_EQ(units, 2u);
    for (size_t u = 0; u < units; ++u) {
      ASSERT_EQ(dt_zero_gather(z, u), DT_OK) << dt_error_last();
      ASSERT_EQ(dt_zero_gather_wait(z, u, -1), DT_OK) << dt_error_last();
      DLTensor view;
      ASSERT_EQ(dt_zero_parameter(z, u, &view), DT_OK) << dt_error_last();
      ASSERT_EQ(view.ndim, u == 0 ? 2 : 1);
      const auto* data = static_cast<const float*>(view.data);
      into.values(static_cast<int>(u)).assign(data, data + into.values(static_cast<int>(u)).size());
      ASSERT_EQ(dt_zero_release(z, u), DT_OK) << dt_error_last();
    }
  }

  // One step on this rank's samples: forward reads the parameters, backward
  // adds the gradients into the dt_zero's buffers (last unit first).
  void train_step(dt_zero* z, int step) {
    Tensors params, grads;
    read(z, params);
    gradient(params, step, rank_ * kPerRank, (rank_ + 1) * kPerRank, grads);
    for (int i = 1; i >= 0; --i) {
      const auto u = static_cast<size_t>(i);
      ASSERT_EQ(dt_zero_gather(z, u), DT_OK);
      ASSERT_EQ(dt_zero_gather_wait(z, u, -1), DT_OK);
      DLTensor g;
      ASSERT_EQ(dt_zero_gradient(z, u, &g), DT_OK) << dt_error_last();
      auto* data = static_cast<float*>(g.data);
      for (std::size_t k = 0; k < grads.values(i).size(); ++k) data[k] += grads.values(i)[k];
      ASSERT_EQ(dt_zero_mark_ready(z, u), DT_OK) << dt_error_last();
      ASSERT_EQ(dt_zero_release(z, u), DT_OK);
    }
    ASSERT_EQ(dt_zero_wait(z, -1), DT_OK) << dt_error_last();
    dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
    ASSERT_EQ(dt_zero_step(z, &info), DT_OK) << dt_error_last();
    EXPECT_EQ(info.step, step + 1);
  }

  // The reference: one process, the whole batch, a dt_optimizer.
  void train_alone(Tensors& params) {
    initialise(params, 0);
    Tensors grads;
    DLTensor p[2] = {params.tensors[0], params.tensors[1]};
    DLTensor g[2] = {grads.tensors[0], grads.tensors[1]};
    const dt_optimizer_options opts = sgd();
    dt_optimizer* opt = nullptr;
    ASSERT_EQ(dt_optimizer_create(&opt, p, g, 2, &opts), DT_OK) << dt_error_last();
    for (int step = 0; step < kSteps; ++step) {
      gradient(params, step, 0, size_ * kPerRank, grads);
      ASSERT_EQ(dt_optimizer_step(opt, nullptr), DT_OK);
    }
    dt_optimizer_destroy(opt);
  }

  std::string checkpoint_dir() const {
    // Ranks under dtrun share their parent, so they agree on the name.
    return (std::filesystem::temp_directory_path() /
            ("dtrain_zero_capi_" + std::to_string(getppid()) + "_" + std::to_string(size_)))
        .string();
  }
};

TEST_F(CapiRanks, EveryStageTrainsLikeOneProcess) {
  Tensors reference;
  train_alone(reference);
  for (int stage = 0; stage <= 3; ++stage) {
    dt_zero* z = create(stage);
    ASSERT_NE(z, nullptr);
    for (int step = 0; step < kSteps; ++step) train_step(z, step);
    Tensors trained;
    read(z, trained);
    EXPECT_LE(relative_error(trained, reference), 1e-5) << "stage " << stage;
    float scale = 0;
    EXPECT_EQ(dt_zero_loss_scale(z, &scale), DT_OK);
    EXPECT_EQ(scale, 1.0f);
    dt_zero_memory memory = DT_ZERO_MEMORY_INIT;
    ASSERT_EQ(dt_zero_memory_usage(z, &memory), DT_OK) << dt_error_last();
    EXPECT_GT(memory.parameters, 0);
    EXPECT_EQ(memory.communication, 0);
    EXPECT_GE(memory.peak, memory.parameters + memory.gradients + memory.optimizer_state + memory.master_weights);
    EXPECT_EQ(dt_zero_destroy(z), DT_OK);
  }
}

// A checkpoint saved after two steps and loaded after a third brings the
// weights and the optimizer back: the third step then repeats exactly. It
// also loads into a dt_zero of another stage. Stage 0 saves every element
// on every rank; any one copy loads.
TEST_F(CapiRanks, ACheckpointLoadsBackWhatWasSaved) {
  const std::string dir = checkpoint_dir();
  Tensors at_save;
  for (int stage : {0, 1, 3}) {
    dt_zero* z = create(stage);
    ASSERT_NE(z, nullptr);
    train_step(z, 0);
    train_step(z, 1);
    ASSERT_EQ(dt_zero_save(z, dir.c_str()), DT_OK) << dt_error_last();
    read(z, at_save);
    train_step(z, 2);
    Tensors after_third;
    read(z, after_third);
    ASSERT_EQ(dt_zero_load(z, dir.c_str()), DT_OK) << dt_error_last();
    train_step(z, 2);
    Tensors again;
    read(z, again);
    EXPECT_EQ(again.w, after_third.w) << "stage " << stage;
    EXPECT_EQ(again.b, after_third.b) << "stage " << stage;
    EXPECT_EQ(dt_zero_destroy(z), DT_OK);
  }
  // Stage 3's checkpoint loads into the other stages' layouts too.
  for (int stage = 0; stage <= 2; ++stage) {
    dt_zero* z = create(stage);
    ASSERT_NE(z, nullptr);
    ASSERT_EQ(dt_zero_load(z, dir.c_str()), DT_OK) << dt_error_last();
    Tensors loaded;
    read(z, loaded);
    EXPECT_EQ(loaded.w, at_save.w) << "stage " << stage;
    EXPECT_EQ(loaded.b, at_save.b) << "stage " << stage;
    EXPECT_EQ(dt_zero_destroy(z), DT_OK);
  }
  ASSERT_EQ(dt_barrier(comm_), DT_OK);
  if (rank_ == 0) std::filesystem::remove_all(dir);
}

TEST_F(CapiRanks, BadArgumentsAndMisuse) {
  dt_zero_options opts;
  EXPECT_EQ(dt_zero_options_init(nullptr, DT_ZERO_OPTIONS_VERSION), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_options_init(&opts, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_options_init(&opts, DT_ZERO_OPTIONS_VERSION + 1), DT_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(dt_zero_options_init(&opts, DT_ZERO_OPTIONS_VERSION), DT_OK);
  EXPECT_EQ(opts.stage, 1);
  EXPECT_EQ(opts.prefetch, 1);

  DLTensor view;
  size_t count = 0;
  float value = 0;
  dt_zero_memory memory = DT_ZERO_MEMORY_INIT;
  EXPECT_EQ(dt_zero_destroy(nullptr), DT_OK);
  EXPECT_EQ(dt_zero_parameter(nullptr, 0, &view), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_gradient(nullptr, 0, &view), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_mark_ready(nullptr, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_wait(nullptr, -1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_set_sync(nullptr, 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_step(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_gather(nullptr, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_gather_wait(nullptr, 0, -1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_release(nullptr, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_unit_count(nullptr, &count), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_set_lr(nullptr, 0.1f), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_loss_scale(nullptr, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_memory_usage(nullptr, &memory), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_save(nullptr, "x"), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_load(nullptr, "x"), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_create(nullptr, nullptr, nullptr, 0, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);

  dt_zero* z = create(3);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(dt_zero_parameter(z, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_parameter(z, 2, &view), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_parameter(z, 0, &view), DT_ERR_INVALID_USAGE);  // not gathered
  EXPECT_EQ(dt_zero_gather(z, 2), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_release(z, 0), DT_ERR_INVALID_USAGE);
  EXPECT_EQ(dt_zero_mark_ready(z, 2), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_set_lr(z, -1.0f), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_zero_unit_count(z, nullptr), DT_ERR_INVALID_ARGUMENT);
  memory.version = 0;
  EXPECT_EQ(dt_zero_memory_usage(z, &memory), DT_ERR_INVALID_ARGUMENT);
  dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
  info.version = 0;
  EXPECT_EQ(dt_zero_step(z, &info), DT_ERR_INVALID_ARGUMENT);

  ASSERT_EQ(dt_zero_gather(z, 0), DT_OK);
  ASSERT_EQ(dt_zero_gather_wait(z, 0, -1), DT_OK);
  EXPECT_EQ(dt_zero_step(z, nullptr), DT_ERR_INVALID_USAGE);  // unit 0 still gathered
  ASSERT_EQ(dt_zero_release(z, 0), DT_OK);
  ASSERT_EQ(dt_zero_gather_wait(z, 1, -1), DT_OK);  // prefetched by the gather of 0
  ASSERT_EQ(dt_zero_release(z, 1), DT_OK);
  ASSERT_EQ(dt_zero_mark_ready(z, 1), DT_OK);
  EXPECT_EQ(dt_zero_mark_ready(z, 1), DT_ERR_INVALID_USAGE);
  EXPECT_EQ(dt_zero_gradient(z, 1, &view), DT_ERR_INVALID_USAGE);
  ASSERT_EQ(dt_zero_mark_ready(z, 0), DT_OK);
  ASSERT_EQ(dt_zero_wait(z, -1), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_zero_step(z, nullptr), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_zero_destroy(z), DT_OK);
}

// What only the C layer refuses still reaches every rank: the rank that
// refused gets its own error, the others DT_ERR_MISMATCH naming it.
TEST_F(CapiRanks, ARankThatRefusesItsArgumentsIsHeardByAll) {
  const int refuser = size_ - 1;
  const bool refuses = rank_ == refuser;
  const std::string named = "rank " + std::to_string(refuser) + " refused";
  const dt_status others = size_ == 1 ? DT_ERR_INVALID_ARGUMENT : DT_ERR_MISMATCH;
  Tensors params;
  dt_zero* z = nullptr;

  dt_zero_options opts = DT_ZERO_OPTIONS_INIT;
  if (refuses) opts.version = 0;
  dt_status status = dt_zero_create(&z, comm_, params.pointers, 2, nullptr, &opts);
  EXPECT_EQ(z, nullptr);
  EXPECT_EQ(status, refuses ? DT_ERR_INVALID_ARGUMENT : others) << dt_error_last();
  if (!refuses) {
    EXPECT_NE(std::string(dt_error_last()).find(named), std::string::npos) << dt_error_last();
  }

  status = dt_zero_create(&z, comm_, refuses ? nullptr : params.pointers, 2, nullptr, nullptr);
  EXPECT_EQ(status, refuses ? DT_ERR_INVALID_ARGUMENT : others) << dt_error_last();

  dt_optimizer_options optim = DT_OPTIMIZER_OPTIONS_INIT;
  if (refuses) optim.comm = comm_;
  status = dt_zero_create(&z, comm_, params.pointers, 2, &optim, nullptr);
  EXPECT_EQ(status, refuses ? DT_ERR_INVALID_ARGUMENT : others) << dt_error_last();
  if (refuses) {
    EXPECT_NE(std::string(dt_error_last()).find("optim->comm"), std::string::npos) << dt_error_last();
  }

  opts = DT_ZERO_OPTIONS_INIT;
  if (refuses) opts.stage = 5;
  status = dt_zero_create(&z, comm_, params.pointers, 2, nullptr, &opts);
  EXPECT_EQ(status, refuses ? DT_ERR_INVALID_ARGUMENT : others) << dt_error_last();

  opts = DT_ZERO_OPTIONS_INIT;
  const size_t units[] = {1, 2};
  opts.stage = 3;
  opts.unit_sizes = units;
  opts.unit_count = 2;
  EXPECT_EQ(dt_zero_create(&z, comm_, params.pointers, 2, nullptr, &opts), DT_ERR_INVALID_ARGUMENT);
  opts.stage = 1;
  opts.unit_count = 1;
  EXPECT_EQ(dt_zero_create(&z, comm_, params.pointers, 2, nullptr, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(z, nullptr);

  // Every rank still works, and hears a missing directory the same way.
  ASSERT_EQ(dt_zero_create(&z, comm_, params.pointers, 2, nullptr, nullptr), DT_OK) << dt_error_last();
  const std::string dir = checkpoint_dir() + "_refused";
  EXPECT_EQ(dt_zero_save(z, refuses ? nullptr : dir.c_str()), refuses ? DT_ERR_INVALID_ARGUMENT : others);
  EXPECT_EQ(dt_zero_load(z, refuses ? nullptr : dir.c_str()), refuses ? DT_ERR_INVALID_ARGUMENT : others);
  EXPECT_EQ(dt_zero_destroy(z), DT_OK);
}

// A dt_zero that outlives its dt_comm fails what communicates with
// DT_ERR_ABORTED and can still be destroyed.
TEST(CapiAlone, AZeroOutlivingItsCommunicatorIsAborted) {
  dt_comm_options comm_opts = DT_COMM_OPTIONS_INIT;
  comm_opts.rank = 0;
  comm_opts.world_size = 1;
  dt_comm* comm = nullptr;
  ASSERT_EQ(dt_comm_create(&comm, &comm_opts), DT_OK) << dt_error_last();
  Tensors params;
  dt_zero_options opts = DT_ZERO_OPTIONS_INIT;
  opts.stage = 2;
  dt_zero* z = nullptr;
  ASSERT_EQ(dt_zero_create(&z, comm, params.pointers, 2, nullptr, &opts), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_comm_destroy(comm), DT_OK);
  EXPECT_EQ(dt_zero_mark_ready(z, 0), DT_OK);
  EXPECT_EQ(dt_zero_mark_ready(z, 1), DT_ERR_ABORTED) << dt_error_last();
  EXPECT_EQ(dt_zero_step(z, nullptr), DT_ERR_INVALID_USAGE) << dt_error_last();
  EXPECT_EQ(dt_zero_destroy(z), DT_OK);
}

}  // namespace
