// N ranks training through a Zero end with the parameters one process gets
// training on the whole batch with the same optimizer: stages 0-3, SGD with
// momentum and AdamW (with global-norm clipping), 1-4 ranks (the MLP's 103
// elements divide by none of 2, 3, 4), units of one or several parameters,
// gradient accumulation with sync on and off, and bf16 parameters within a
// looser bound (f16 too). Also equal to DDP with a local optimizer in the same world.

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ddp/mlp.hpp"
#include "optim/optimizer.hpp"
#include "optim/tensors.hpp"
#include "parallel/ddp/broadcast.hpp"
#include "parallel/ddp/data_parallel.hpp"
#include "trainer.hpp"
#include "ucx/harness.hpp"
#include "common/parsed_tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::zero::Zero;

constexpr int kSteps = 4;
constexpr std::size_t kBatch = 12;  // divides among 1-4 ranks
constexpr unsigned kInitSeed = 100;

struct Mode {
  const char* name;
  int stage;
  optim::Kind kind;
  int micro_steps;
  bool sync_last_only;  // sync off for all micro-steps but the last
  std::int64_t bucket_bytes;
  std::optional<std::vector<std::size_t>> unit_sizes;
  DType dtype;
  float max_grad_norm;
  double tolerance;  // on max |p - p_ref| / max |p_ref| after kSteps
};

// f32: sums in another order differ by a few ulps. bf16 parameters carry 8
// significant bits: each step rounds the weights and each micro-step the
// gradients, which leaves them about 4e-3 relative off the f32 reference.
const Mode kModes[] = {
    {"s0_sgd", 0, optim::Kind::sgd, 1, false, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s0_adamw_accumulate", 0, optim::Kind::adamw, 3, true, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s1_sgd", 1, optim::Kind::sgd, 1, false, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s1_adamw_one_unit", 1, optim::Kind::adamw, 1, false, 1 << 20, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s1_accumulate_sync_off", 1, optim::Kind::sgd, 3, true, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s1_accumulate_sync_on", 1, optim::Kind::adamw, 3, false, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s2_sgd", 2, optim::Kind::sgd, 1, false, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s2_adamw_clipped", 2, optim::Kind::adamw, 1, false, 64, std::nullopt, DType::f32, 0.05f, 1e-5},
    {"s2_accumulate_sync_off", 2, optim::Kind::adamw, 3, true, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s2_accumulate_sync_on", 2, optim::Kind::sgd, 2, false, 1 << 20, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s3_sgd", 3, optim::Kind::sgd, 1, false, 64, std::nullopt, DType::f32, 0.0f, 1e-5},
    {"s3_adamw_units_2_2", 3, optim::Kind::adamw, 1, false, 64, std::vector<std::size_t>{2, 2}, DType::f32, 0.0f, 1e-5},
    {"s3_clipped_units_3_1_accumulate", 3, optim::Kind::adamw, 3, true, 64, std::vector<std::size_t>{3, 1}, DType::f32,
     0.05f, 1e-5},
    {"s1_bf16", 1, optim::Kind::adamw, 1, false, 64, std::nullopt, DType::bf16, 0.0f, 1e-2},
    {"s2_bf16_accumulate", 2, optim::Kind::adamw, 2, false, 64, std::nullopt, DType::bf16, 0.0f, 1e-2},
    {"s2_f16", 2, optim::Kind::adamw, 1, false, 64, std::nullopt, DType::f16, 0.0f, 1e-2},
    {"s3_bf16", 3, optim::Kind::sgd, 1, false, 64, std::vector<std::size_t>{2, 2}, DType::bf16, 0.0f, 1e-2},
};

void PrintTo(const Mode& mode, std::ostream* os) { *os << mode.name; }

optim::Config config_of(optim::Kind kind, float max_grad_norm) {
  optim::Config config;
  config.kind = kind;
  config.sgd.lr = 0.1f;
  config.sgd.momentum = 0.9f;
  config.adamw.lr = 0.02f;
  config.adamw.weight_decay = 0.01f;
  config.max_grad_norm = max_grad_norm;
  return config;
}

Batch batch_of_step(int step) { return Batch::make(kBatch, 1000 + static_cast<unsigned>(step)); }

// DLTensors over a model's parameters or gradients (f32), for an Optimizer.
std::vector<DLTensor> describe(std::vector<std::vector<float>>& buffers,
                               std::vector<std::vector<std::int64_t>>& shapes) {
  std::vector<DLTensor> tensors;
  for (std::size_t t = 0; t < buffers.size(); ++t) {
    DLTensor tensor{};
    tensor.data = buffers[t].data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int>(shapes[t].size());
    tensor.shape = shapes[t].data();
    tensor.dtype = dtype_to_dlpack(DType::f32);
    tensors.push_back(tensor);
  }
  return tensors;
}

std::vector<std::vector<float>> train_alone(const optim::Config& config) {
  Mlp model(kInitSeed);
  auto shapes = Mlp::shapes();
  const std::vector<DLTensor> params = describe(model.params, shapes);
  const std::vector<DLTensor> grads = describe(model.grads, shapes);
  optim::Optimizer optimizer(config, testing::checked(params.data(), grads.data(), params.size()));
  for (int step = 0; step < kSteps; ++step) {
    model.zero_grad();
    model.accumulate(batch_of_step(step), 1.0f / kBatch);
    optimizer.step();
  }
  return model.params;
}

std::vector<std::vector<float>> train_zero(comm::Communicator& comm, const Mode& mode) {
  const auto rank = static_cast<std::size_t>(comm.rank());
  Mlp model(kInitSeed + static_cast<unsigned>(rank));  // the Zero starts from rank 0's
  ParameterTensors tensors(model, mode.dtype);
  parallel::zero::Options options;
  options.stage = mode.stage;
  options.bucket_bytes = mode.bucket_bytes;
  options.unit_sizes = mode.unit_sizes;
  Zero zero(comm, testing::parsed(tensors.pointers(), "params"), config_of(mode.kind, mode.max_grad_norm), options);

  const std::size_t mine = kBatch / static_cast<std::size_t>(comm.size());
  const auto micro = static_cast<std::size_t>(mode.micro_steps);
  for (int step = 0; step < kSteps; ++step) {
    const Batch local = batch_of_step(step).slice(rank * mine, mine);
    for (std::size_t m = 0; m < micro; ++m) {
      zero.set_sync(!mode.sync_last_only || m + 1 == micro);
      const std::size_t begin = m * mine / micro;
      const std::size_t end = (m + 1) * mine / micro;
      micro_step(zero, model, local.slice(begin, end - begin), 1.0f / static_cast<float>(mine));
    }
    zero.step();
  }
  return read_parameters(zero);
}

std::vector<std::vector<float>> train_ddp(comm::Communicator& comm, const optim::Config& config) {
  const auto rank = static_cast<std::size_t>(comm.rank());
  Mlp model(kInitSeed + static_cast<unsigned>(rank));
  auto shapes = Mlp::shapes();
  const std::vector<DLTensor> params = describe(model.params, shapes);
  const std::vector<DLTensor> grads = describe(model.grads, shapes);
  std::vector<const DLTensor*> param_pointers, grad_pointers;
  for (std::size_t t = 0; t < params.size(); ++t) {
    param_pointers.push_back(&params[t]);
    grad_pointers.push_back(&grads[t]);
  }
  parallel::ddp::broadcast_parameters(comm, testing::parsed(param_pointers, "parameters"), 0);
  parallel::ddp::Options options;
  options.bucket_bytes = 64;
  parallel::ddp::DataParallel ddp(comm, testing::parsed(grad_pointers, "gradients"), options);
  optim::Optimizer optimizer(config, testing::checked(params.data(), grads.data(), params.size()));
  const std::size_t mine = kBatch / static_cast<std::size_t>(comm.size());
  for (int step = 0; step < kSteps; ++step) {
    model.zero_grad();
    model.accumulate(batch_of_step(step).slice(rank * mine, mine), 1.0f / static_cast<float>(mine),
                     [&](std::size_t i) { ddp.mark_ready(i); });
    ddp.wait();
    optimizer.step();
  }
  return model.params;
}

void record(comm::Communicator& comm, double error) {
  if (comm.rank() != 0) return;
  std::ostringstream text;
  text << error;
  ::testing::Test::RecordProperty("relative_error", text.str());
}

class Equivalence : public ::testing::TestWithParam<std::tuple<int, Mode>> {};

TEST_P(Equivalence, MatchesOneProcessOnTheWholeBatch) {
  const auto& [ranks, mode] = GetParam();
  const auto reference = train_alone(config_of(mode.kind, mode.max_grad_norm));
  run_world(ranks, [&](comm::Communicator& comm) {
    const double error = relative_error(train_zero(comm, mode), reference);
    EXPECT_LE(error, mode.tolerance) << "rank " << comm.rank();
    record(comm, error);
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, Equivalence,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::ValuesIn(kModes)),
                         [](const auto& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "_ranks_" +
                                  std::get<1>(param_info.param).name;
                         });

class MatchesDdp : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(MatchesDdp, AdamW) {
  const auto [ranks, stage] = GetParam();
  const Mode mode{"ddp", stage, optim::Kind::adamw, 1, false, 64, std::nullopt, DType::f32, 0.0f, 1e-5};
  run_world(ranks, [&](comm::Communicator& comm) {
    const auto ddp = train_ddp(comm, config_of(mode.kind, 0.0f));
    const double error = relative_error(train_zero(comm, mode), ddp);
    EXPECT_LE(error, 1e-5) << "rank " << comm.rank();
    record(comm, error);
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, MatchesDdp,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::Values(0, 1, 2, 3)),
                         [](const auto& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "_ranks_stage_" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

}  // namespace
}  // namespace dtrain::test
