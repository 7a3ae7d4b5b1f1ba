// N ranks training with DDP-averaged gradients end with the parameters one
// process gets training on the whole batch: for 1 to 4 ranks, with several
// buckets or one, with gradient accumulation over micro-steps (sync off,
// then on), with uneven per-rank batches averaged by sample count (one rank
// may hold none), and with 16-bit communication within a looser bound.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "mlp.hpp"
#include "parallel/ddp/broadcast.hpp"
#include "parallel/ddp/data_parallel.hpp"
#include "tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::ddp::Compression;
using parallel::ddp::DataParallel;
using parallel::ddp::Options;

constexpr int kSteps = 5;
constexpr float kLearningRate = 0.2f;
constexpr unsigned kInitSeed = 100;  // rank 0's initialisation, which the others receive

struct Mode {
  const char* name;
  int micro_steps;
  bool uneven;  // uneven shares, averaged by sample count
  Compression compression;
  std::int64_t bucket_bytes;
  double tolerance;  // on max |p - p_ref| / max |p_ref| after kSteps
};

// f32 sums in another order differ by a few ulps. A 16-bit gradient carries
// 8 (bf16) or 11 (f16) significant bits, rounded once on the way in, once per
// ring step and once on the way back; after kSteps the parameters are off by
// about 8e-4 (bf16) and 1.4e-4 (f16) relative, under the bounds below.
const Mode kModes[] = {
    {"even", 1, false, Compression::none, 64, 1e-5},
    {"one_bucket", 1, false, Compression::none, std::int64_t{25} << 20, 1e-5},
    {"accumulate", 3, false, Compression::none, 64, 1e-5},
    {"uneven_weighted", 3, true, Compression::none, 64, 1e-5},
    {"bf16", 1, false, Compression::bf16, 64, 5e-3},
    {"f16", 2, true, Compression::f16, 64, 1e-3},
};

void PrintTo(const Mode& mode, std::ostream* os) { *os << mode.name; }

// Samples per rank in one step.
std::vector<std::size_t> shares(int ranks, bool uneven) {
  if (!uneven) return std::vector<std::size_t>(static_cast<std::size_t>(ranks), 12 / ranks);
  switch (ranks) {
    case 1: return {7};
    case 2: return {3, 8};
    case 3: return {1, 6, 4};
    default: return {5, 0, 3, 4};
  }
}

std::vector<std::vector<float>> train_alone(std::size_t batch_size) {
  Mlp model(kInitSeed);
  for (int step = 0; step < kSteps; ++step) {
    const Batch batch = Batch::make(batch_size, 1000 + static_cast<unsigned>(step));
    model.zero_grad();
    model.accumulate(batch, 1.0f / static_cast<float>(batch_size));
    model.sgd(kLearningRate);
  }
  return model.params;
}

void train_rank(comm::Communicator& comm, const Mode& mode, const std::vector<std::size_t>& share,
                std::vector<std::vector<float>>& result) {
  const auto rank = static_cast<std::size_t>(comm.rank());
  Mlp model(kInitSeed + static_cast<unsigned>(rank));  // replicas start different
  TensorList params;
  TensorList grads;
  const auto shapes = Mlp::shapes();
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    params.add(model.params[t], DType::f32, shapes[t]);
    grads.add(model.grads[t], DType::f32, shapes[t]);
  }
  parallel::ddp::broadcast_parameters(comm, params.get("parameters"), 0);

  Options options;
  options.bucket_bytes = mode.bucket_bytes;
  options.compression = mode.compression;
  options.weighted = mode.uneven;
  DataParallel ddp(comm, grads.get(), options);

  std::size_t batch_size = 0;
  for (std::size_t n : share) batch_size += n;
  std::size_t first = 0;
  for (std::size_t r = 0; r < rank; ++r) first += share[r];
  const std::size_t mine = share[rank];

  for (int step = 0; step < kSteps; ++step) {
    const Batch local = Batch::make(batch_size, 1000 + static_cast<unsigned>(step)).slice(first, mine);
    model.zero_grad();
    if (mode.uneven) ddp.set_local_weight(static_cast<double>(mine));
    // Each micro-step adds its part of this rank's mean gradient.
    const float scale = mine > 0 ? 1.0f / static_cast<float>(mine) : 0.0f;
    const auto micro = static_cast<std::size_t>(mode.micro_steps);
    for (std::size_t m = 0; m < micro; ++m) {
      const std::size_t begin = m * mine / micro;
      const std::size_t end = (m + 1) * mine / micro;
      ddp.set_sync(m + 1 == micro);
      model.accumulate(local.slice(begin, end - begin), scale, [&](std::size_t i) { ddp.mark_ready(i); });
      ddp.wait();
    }
    model.sgd(kLearningRate);
  }
  result = model.params;
}

class Equivalence : public ::testing::TestWithParam<std::tuple<int, Mode>> {};

TEST_P(Equivalence, MatchesOneProcessOnTheWholeBatch) {
  const auto& [ranks, mode] = GetParam();
  const auto share = shares(ranks, mode.uneven);
  std::size_t batch_size = 0;
  for (std::size_t n : share) batch_size += n;
  const auto reference = train_alone(batch_size);

  run_world(ranks, [&](comm::Communicator& comm) {
    std::vector<std::vector<float>> params;
    train_rank(comm, mode, share, params);
    const double error = relative_error(params, reference);
    EXPECT_LE(error, mode.tolerance) << "rank " << comm.rank();
    if (comm.rank() == 0) {
      std::ostringstream text;
      text << error;
      RecordProperty("relative_error", text.str());
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, Equivalence,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4), ::testing::ValuesIn(kModes)),
                         [](const auto& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "_ranks_" +
                                  std::get<1>(param_info.param).name;
                         });

}  // namespace
}  // namespace dtrain::test
