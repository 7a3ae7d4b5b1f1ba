// How a DataParallel answers misuse and edge cases: gradients never marked
// (named, or counted as zero with find_unused), indices out of range or
// marked twice, steps with sync off, weights, bad options and gradients, and
// gradients of every floating dtype.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "parallel/ddp/data_parallel.hpp"
#include "tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::ddp::BucketState;
using parallel::ddp::Compression;
using parallel::ddp::DataParallel;
using parallel::ddp::Options;

// Four f32 gradients whose values depend on the rank, and their averages.
struct Grads {
  static constexpr std::size_t kCount = 4;
  std::vector<std::vector<float>> values;
  TensorList list;

  explicit Grads(int rank) {
    const std::vector<std::vector<std::int64_t>> shapes{{4, 3}, {3}, {2, 2}, {5}};
    values.resize(kCount);
    for (std::size_t t = 0; t < kCount; ++t) {
      std::int64_t count = 1;
      for (std::int64_t extent : shapes[t]) count *= extent;
      values[t].resize(static_cast<std::size_t>(count));
      for (std::size_t i = 0; i < values[t].size(); ++i) values[t][i] = value(rank, t, i);
      list.add(values[t], DType::f32, shapes[t]);
    }
  }
  static float value(int rank, std::size_t t, std::size_t i) {
    return static_cast<float>(rank + 1) * static_cast<float>(t + 1) + 0.25f * static_cast<float>(i);
  }
  // The mean over `ranks` ranks, those in `absent` contributing zero.
  static float mean(int ranks, std::size_t t, std::size_t i, const std::vector<int>& absent = {}) {
    double sum = 0;
    for (int r = 0; r < ranks; ++r) {
      if (std::find(absent.begin(), absent.end(), r) == absent.end()) sum += value(r, t, i);
    }
    return static_cast<float>(sum / ranks);
  }
  void reset(int rank) {
    for (std::size_t t = 0; t < kCount; ++t) {
      for (std::size_t i = 0; i < values[t].size(); ++i) values[t][i] = value(rank, t, i);
    }
  }
  void expect_means(int ranks, const std::vector<int>& absent_from_1 = {}) const {
    for (std::size_t t = 0; t < kCount; ++t) {
      for (std::size_t i = 0; i < values[t].size(); ++i) {
        EXPECT_NEAR(values[t][i], mean(ranks, t, i, t == 1 ? absent_from_1 : std::vector<int>{}), 1e-5)
            << "gradient " << t << "[" << i << "]";
      }
    }
  }
  void expect_unchanged(int rank) const {
    for (std::size_t t = 0; t < kCount; ++t) {
      for (std::size_t i = 0; i < values[t].size(); ++i) EXPECT_EQ(values[t][i], value(rank, t, i));
    }
  }
};

Options one_per_bucket() {
  Options options;
  options.bucket_bytes = 1;
  return options;
}

void mark_all(DataParallel& ddp) {
  for (std::size_t i = Grads::kCount; i-- > 0;) ddp.mark_ready(i);
}

TEST(Usage, UnmarkedGradientsAreNamedAndTheStepIsAbandoned) {
  run_world(2, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    DataParallel ddp(comm, grads.list.get(), one_per_bucket());
    ddp.mark_ready(3);  // starts the first bucket
    ddp.mark_ready(0);
    const Caught caught = catch_error([&] { ddp.wait(); });
    EXPECT_EQ(caught.status, DT_ERR_INVALID_USAGE);
    EXPECT_NE(caught.message.find("gradients 1, 2 were never marked ready"), std::string::npos) << caught.message;
    grads.expect_unchanged(comm.rank());

    // The next step starts afresh.
    mark_all(ddp);
    ddp.wait();
    grads.expect_means(2);
  });
}

TEST(Usage, FindUnusedCountsUnmarkedGradientsAsZero) {
  run_world(3, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    Options options = one_per_bucket();
    options.find_unused = true;
    DataParallel ddp(comm, grads.list.get(), options);
    for (std::size_t i = Grads::kCount; i-- > 0;) {
      if (comm.rank() == 1 && i == 1) {
        // Rank 1 never computed this gradient; whatever the buffer holds is ignored.
        std::fill(grads.values[1].begin(), grads.values[1].end(), std::numeric_limits<float>::quiet_NaN());
        continue;
      }
      ddp.mark_ready(i);
    }
    ddp.wait();
    grads.expect_means(3, {1});
  });
}

TEST(Usage, NoGradientMarkedWithFindUnusedAveragesZeros) {
  run_world(2, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    Options options;
    options.find_unused = true;
    DataParallel ddp(comm, grads.list.get(), options);
    if (comm.rank() == 0) mark_all(ddp);
    ddp.wait();
    for (std::size_t t = 0; t < Grads::kCount; ++t) {
      for (std::size_t i = 0; i < grads.values[t].size(); ++i) {
        EXPECT_FLOAT_EQ(grads.values[t][i], Grads::value(0, t, i) / 2);
      }
    }
  });
}

// Buckets start in bucket order whatever order gradients are marked in, so
// ranks marking in different orders still issue the same allreduces.
TEST(Usage, RanksMayMarkInDifferentOrders) {
  run_world(3, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    DataParallel ddp(comm, grads.list.get(), one_per_bucket());
    std::vector<std::size_t> order{0, 1, 2, 3};
    std::mt19937 rng(static_cast<unsigned>(comm.rank()));
    for (int step = 0; step < 3; ++step) {
      std::shuffle(order.begin(), order.end(), rng);
      grads.reset(comm.rank());
      for (std::size_t i : order) ddp.mark_ready(i);
      ddp.wait();
      grads.expect_means(3);
    }
  });
}

TEST(Usage, IndexOutOfRangeIsAnInvalidArgument) {
  run_world(2, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    DataParallel ddp(comm, grads.list.get(), one_per_bucket());
    Caught caught = catch_error([&] { ddp.mark_ready(4); });
    EXPECT_EQ(caught.status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(caught.message.find("gradient 4 is out of range"), std::string::npos) << caught.message;
    EXPECT_EQ(catch_error([&] { (void)ddp.bucket_of(17); }).status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(catch_error([&] { (void)ddp.bucket_state(4); }).status, DT_ERR_INVALID_ARGUMENT);
    mark_all(ddp);
    ddp.wait();
    grads.expect_means(2);
  });
}

TEST(Usage, MarkingTwiceIsInvalidUsageAndCountsOnce) {
  run_world(2, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    DataParallel ddp(comm, grads.list.get(), Options{});
    ddp.mark_ready(2);
    const Caught caught = catch_error([&] { ddp.mark_ready(2); });
    EXPECT_EQ(caught.status, DT_ERR_INVALID_USAGE);
    EXPECT_NE(caught.message.find("gradient 2 was already marked"), std::string::npos) << caught.message;
    ddp.mark_ready(3);
    ddp.mark_ready(1);
    ddp.mark_ready(0);
    ddp.wait();
    grads.expect_means(2);
  });
}

TEST(Usage, WithSyncOffMarkingAndWaitingDoNothing) {
  run_world(2, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    DataParallel ddp(comm, grads.list.get(), one_per_bucket());
    ddp.set_sync(false);
    EXPECT_FALSE(ddp.sync());
    mark_all(ddp);
    mark_all(ddp);  // not a second mark: nothing was recorded
    for (std::size_t b = 0; b < ddp.bucket_count(); ++b) EXPECT_EQ(ddp.bucket_state(b), BucketState::waiting);
    ddp.wait();
    grads.expect_unchanged(comm.rank());
    EXPECT_EQ(catch_error([&] { ddp.mark_ready(9); }).status, DT_ERR_INVALID_ARGUMENT);

    ddp.set_sync(true);
    ddp.mark_ready(3);
    const Caught caught = catch_error([&] { ddp.set_sync(false); });
    EXPECT_EQ(caught.status, DT_ERR_INVALID_USAGE) << caught.message;
    ddp.mark_ready(2);
    ddp.mark_ready(1);
    ddp.mark_ready(0);
    ddp.wait();
    grads.expect_means(2);
  });
}

TEST(Usage, WeightsAreCheckedAndMustNotAllBeZero) {
  run_world(2, [](comm::Communicator& comm) {
    Grads grads(comm.rank());
    {
      DataParallel plain(comm, grads.list.get(), Options{});
      EXPECT_EQ(catch_error([&] { plain.set_local_weight(2); }).status, DT_ERR_INVALID_USAGE);
    }
    Options options = one_per_bucket();
    options.weighted = true;
    DataParallel ddp(comm, grads.list.get(), options);
    EXPECT_EQ(catch_error([&] { ddp.set_local_weight(-1); }).status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(catch_error([&] { ddp.set_local_weight(std::nan("")); }).status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(catch_error([&] { ddp.set_local_weight(INFINITY); }).status, DT_ERR_INVALID_ARGUMENT);

    ddp.set_local_weight(0);
    mark_all(ddp);
    const Caught caught = catch_error([&] { ddp.wait(); });
    EXPECT_EQ(caught.status, DT_ERR_INVALID_USAGE);
    EXPECT_NE(caught.message.find("weights add up to 0"), std::string::npos) << caught.message;
    grads.expect_unchanged(comm.rank());

    // Weighted 1 : 3, rank 1 counts three times.
    ddp.set_local_weight(comm.rank() == 0 ? 1 : 3);
    ddp.mark_ready(3);
    EXPECT_EQ(catch_error([&] { ddp.set_local_weight(5); }).status, DT_ERR_INVALID_USAGE);
    ddp.mark_ready(2);
    ddp.mark_ready(1);
    ddp.mark_ready(0);
    ddp.wait();
    for (std::size_t t = 0; t < Grads::kCount; ++t) {
      for (std::size_t i = 0; i < grads.values[t].size(); ++i) {
        EXPECT_NEAR(grads.values[t][i], (Grads::value(0, t, i) + 3 * Grads::value(1, t, i)) / 4, 1e-5);
      }
    }
  });
}

TEST(Usage, BadGradientsAndOptionsAreInvalidArguments) {
  run_world(1, [](comm::Communicator& comm) {
    std::vector<float> floats(8);
    std::vector<std::int32_t> ints(8);
    {
      TensorList list;
      list.add(floats, DType::f32, {8});
      list.add(ints, DType::i32, {8});
      const Caught caught = catch_error([&] { DataParallel ddp(comm, list.get(), Options{}); });
      EXPECT_EQ(caught.status, DT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(caught.message.find("gradients[1] is int32"), std::string::npos) << caught.message;
    }
    {
      TensorList list;
      list.add(floats.data(), DType::f32, {6});
      list.add(floats.data() + 4, DType::f32, {4});
      const Caught caught = catch_error([&] { DataParallel ddp(comm, list.get(), Options{}); });
      EXPECT_EQ(caught.status, DT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(caught.message.find("overlap"), std::string::npos) << caught.message;
    }
    {
      TensorList list;
      list.add(floats, DType::f32, {8});
      Options options;
      options.bucket_bytes = 0;
      EXPECT_EQ(catch_error([&] { DataParallel ddp(comm, list.get(), options); }).status, DT_ERR_INVALID_ARGUMENT);
      options = Options{};
      options.compression = static_cast<Compression>(7);
      EXPECT_EQ(catch_error([&] { DataParallel ddp(comm, list.get(), options); }).status, DT_ERR_INVALID_ARGUMENT);
      const DLTensor* null_tensor[] = {nullptr};
      EXPECT_EQ(catch_error([&] { DataParallel ddp(comm, testing::parsed(null_tensor, "gradients"), Options{}); }).status, DT_ERR_INVALID_ARGUMENT);
    }
    // No gradients at all is a DDP with nothing to do.
    DataParallel empty(comm, std::vector<CheckedTensor>{}, Options{});
    EXPECT_EQ(empty.bucket_count(), 0u);
    empty.wait();
  });
}

// Every floating dtype, with and without compression, several buckets per
// dtype; values small enough that 16-bit results are close to exact.
class Dtypes : public ::testing::TestWithParam<std::tuple<int, Compression>> {};

TEST_P(Dtypes, MixedGradientDtypesAverage) {
  const auto [ranks, compression] = GetParam();
  run_world(ranks, [compression](comm::Communicator& comm) {
    const float base = static_cast<float>(comm.rank() + 1);
    std::vector<double> f64(5, 2.0 * base);
    std::vector<float> f32(7, 4.0f * base);
    std::vector<std::uint16_t> f16(3, 0x3c00);   // 1.0
    std::vector<std::uint16_t> bf16(3, 0x3f80);  // 1.0
    std::vector<float> f32b(2, -1.0f * base);
    std::vector<float> empty;
    TensorList list;
    list.add(f64, DType::f64, {5});
    list.add(f32, DType::f32, {7});
    list.add(f16, DType::f16, {3});
    list.add(bf16, DType::bf16, {3});
    list.add(f32b, DType::f32, {1, 2});
    list.add(empty, DType::f32, {0});
    Options options;
    options.bucket_bytes = 16;
    options.compression = compression;
    DataParallel ddp(comm, list.get(), options);
    for (std::size_t i = 6; i-- > 0;) ddp.mark_ready(i);
    ddp.wait();
    const int n = comm.size();
    const double mean_base = (n + 1) / 2.0;
    const double tolerance = compression == Compression::none ? 1e-6 : 1e-2;
    for (double v : f64) EXPECT_NEAR(v, 2.0 * mean_base, tolerance * 2 * mean_base);
    for (float v : f32) EXPECT_NEAR(v, 4.0 * mean_base, tolerance * 4 * mean_base);
    for (std::uint16_t v : f16) EXPECT_NEAR(v, 0x3c00, 1) << "f16 of 1.0";
    for (std::uint16_t v : bf16) EXPECT_NEAR(v, 0x3f80, 1) << "bf16 of 1.0";
    for (float v : f32b) EXPECT_NEAR(v, -mean_base, tolerance * mean_base);
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, Dtypes,
                         ::testing::Combine(::testing::Values(1, 2, 3),
                                            ::testing::Values(Compression::none, Compression::bf16, Compression::f16)),
                         [](const auto& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "_ranks_" +
                                  parallel::ddp::compression_name(std::get<1>(param_info.param));
                         });

}  // namespace
}  // namespace dtrain::test
