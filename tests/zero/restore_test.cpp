// A Zero's checkpoint view and restore: training saved on N ranks in one
// stage goes on in another stage, or on another number of ranks, after a
// load exactly where it left off, weights, optimizer state and step count
// included (bf16 parameters, whose f32 master weights are what is saved).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ddp/mlp.hpp"
#include "parallel/zero/checkpoint.hpp"
#include "trainer.hpp"
#include "ucx/harness.hpp"
#include "common/parsed_tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::zero::Zero;

constexpr std::size_t kBatch = 12;

std::unique_ptr<Zero> make_zero(comm::Communicator& comm, int stage) {
  Mlp model(7);
  ParameterTensors tensors(model, DType::bf16);
  parallel::zero::Options options;
  options.stage = stage;
  options.bucket_bytes = 64;
  return std::make_unique<Zero>(comm, testing::parsed(tensors.pointers(), "params"), optim::Config{}, options);
}

void train(comm::Communicator& comm, Zero& zero, int step) {
  Mlp model(0);  // only its buffers: micro_step copies the Zero's parameters in
  const std::size_t mine = kBatch / static_cast<std::size_t>(comm.size());
  const Batch local =
      Batch::make(kBatch, 50 + static_cast<unsigned>(step)).slice(static_cast<std::size_t>(comm.rank()) * mine, mine);
  micro_step(zero, model, local, 1.0f / static_cast<float>(mine));
  zero.step();
}

class StageChange : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(StageChange, TrainingGoesOnWhereItWasSaved) {
  const auto [ranks, saved_stage, loaded_stage] = GetParam();
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("dtrain_zero_restore_" + std::to_string(getpid()) + "_" + std::to_string(ranks) + "_" +
                            std::to_string(saved_stage) + std::to_string(loaded_stage)))
                              .string();
  run_world(ranks, [&](comm::Communicator& comm) {
    auto saved = make_zero(comm, saved_stage);
    train(comm, *saved, 0);
    train(comm, *saved, 1);
    save_checkpoint(comm, saved->checkpoint_view(Zero::ViewFor::save), dir);

    auto loaded = make_zero(comm, loaded_stage);
    loaded->restore(load_checkpoint(comm, loaded->checkpoint_view(Zero::ViewFor::load), dir));
    EXPECT_EQ(read_parameters(*loaded), read_parameters(*saved));
    EXPECT_EQ(loaded->checkpoint_view(Zero::ViewFor::load).steps, 2);

    train(comm, *saved, 2);
    train(comm, *loaded, 2);
    EXPECT_LE(relative_error(read_parameters(*loaded), read_parameters(*saved)), 1e-5) << "rank " << comm.rank();
  });
  std::filesystem::remove_all(dir);
}

std::string checkpoint_dir(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("dtrain_zero_" + name + "_" + std::to_string(getpid()))).string();
}

// Saved on 4 ranks after two steps, loaded on `ranks` in `stage`: the third
// step gives what the 4 ranks' own third step gave.
class WorldChange : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(WorldChange, TrainingGoesOnLikeTheUninterruptedRun) {
  const auto [ranks, stage] = GetParam();
  const std::string dir = checkpoint_dir("world_" + std::to_string(ranks) + "_" + std::to_string(stage));
  std::vector<std::vector<float>> uninterrupted;
  run_world(4, [&](comm::Communicator& comm) {
    auto zero = make_zero(comm, 2);
    train(comm, *zero, 0);
    train(comm, *zero, 1);
    save_checkpoint(comm, zero->checkpoint_view(Zero::ViewFor::save), dir);
    train(comm, *zero, 2);
    auto parameters = read_parameters(*zero);
    if (comm.rank() == 0) uninterrupted = std::move(parameters);
  });
  ASSERT_FALSE(uninterrupted.empty());
  run_world(ranks, [&](comm::Communicator& comm) {
    auto zero = make_zero(comm, stage);
    zero->restore(load_checkpoint(comm, zero->checkpoint_view(Zero::ViewFor::load), dir));
    EXPECT_EQ(zero->checkpoint_view(Zero::ViewFor::load).steps, 2);
    train(comm, *zero, 2);
    EXPECT_LE(relative_error(read_parameters(*zero), uninterrupted), 1e-5) << "rank " << comm.rank();
  });
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(FromFourRanks, WorldChange,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Values(1, 2, 3)),
                         [](const auto& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "_ranks_stage_" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

INSTANTIATE_TEST_SUITE_P(Worlds, StageChange,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::Values(0, 2, 3),
                                            ::testing::Values(0, 1, 3)),
                         [](const auto& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "_ranks_stage_" +
                                  std::to_string(std::get<1>(param_info.param)) + "_to_" +
                                  std::to_string(std::get<2>(param_info.param));
                         });

}  // namespace
}  // namespace dtrain::test
