// Ranks that register different gradient layouts or options are told so at
// creation, on every rank, with DT_ERR_MISMATCH naming the first difference,
// instead of hanging in or corrupting the first allreduce. A rank whose own
// arguments are bad reports them; the others learn that it refused.

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "parallel/ddp/data_parallel.hpp"
#include "tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::ddp::DataParallel;
using parallel::ddp::Options;

struct Layout {
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<DType> dtypes;
};

// Creates a DDP over `layout` (zero-filled buffers) and returns what it threw.
Caught create(comm::Communicator& comm, const Layout& layout, const Options& options = {}) {
  std::vector<std::vector<double>> buffers;  // large enough for any dtype
  TensorList list;
  for (std::size_t t = 0; t < layout.shapes.size(); ++t) {
    std::int64_t count = 1;
    for (std::int64_t extent : layout.shapes[t]) count *= extent;
    buffers.emplace_back(static_cast<std::size_t>(count));
  }
  for (std::size_t t = 0; t < layout.shapes.size(); ++t) list.add(buffers[t], layout.dtypes[t], layout.shapes[t]);
  const auto start = std::chrono::steady_clock::now();
  Caught caught = catch_error([&] { DataParallel ddp(comm, list.get(), options); });
  // Refused at once, not after some deadline.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  return caught;
}

const Layout kLayout{{{4, 3}, {3}, {2, 5}}, {DType::f32, DType::f32, DType::f32}};

void expect_mismatch(const Caught& caught, const std::string& text) {
  EXPECT_EQ(caught.status, DT_ERR_MISMATCH) << caught.message;
  EXPECT_NE(caught.message.find(text), std::string::npos) << caught.message;
}

TEST(Mismatch, ShapeOnOneRank) {
  run_world(3, [](comm::Communicator& comm) {
    Layout layout = kLayout;
    if (comm.rank() == 2) layout.shapes[2] = {5, 2};
    expect_mismatch(create(comm, layout), "gradient 2 is float32[2, 5] on rank 0 but float32[5, 2] on rank 2");
  });
}

TEST(Mismatch, DtypeOnOneRank) {
  run_world(2, [](comm::Communicator& comm) {
    Layout layout = kLayout;
    if (comm.rank() == 1) layout.dtypes[0] = DType::f64;
    expect_mismatch(create(comm, layout), "gradient 0 is float32[4, 3] on rank 0 but float64[4, 3] on rank 1");
  });
}

TEST(Mismatch, GradientCount) {
  run_world(4, [](comm::Communicator& comm) {
    Layout layout = kLayout;
    if (comm.rank() >= 2) {
      layout.shapes.push_back({7});
      layout.dtypes.push_back(DType::f32);
    }
    expect_mismatch(create(comm, layout), "3 gradients on rank 0 but 4 on rank 2");
  });
}

TEST(Mismatch, Options) {
  run_world(3, [](comm::Communicator& comm) {
    Options options;
    if (comm.rank() == 1) options.bucket_bytes = 1024;
    expect_mismatch(create(comm, kLayout, options), "bucket_bytes is 26214400 on rank 0 but 1024 on rank 1");
    options = Options{};
    if (comm.rank() == 2) options.find_unused = true;
    expect_mismatch(create(comm, kLayout, options), "find_unused is 0 on rank 0 but 1 on rank 2");
  });
}

TEST(Mismatch, OneRankRefusesItsArguments) {
  run_world(3, [](comm::Communicator& comm) {
    Layout layout = kLayout;
    if (comm.rank() == 1) layout.dtypes[1] = DType::i32;
    const Caught caught = create(comm, layout);
    if (comm.rank() == 1) {
      EXPECT_EQ(caught.status, DT_ERR_INVALID_ARGUMENT) << caught.message;
      EXPECT_NE(caught.message.find("gradients[1] is int32"), std::string::npos) << caught.message;
    } else {
      expect_mismatch(caught, "rank 1 refused its arguments");
    }
  });
}

TEST(Mismatch, AgreeingRanksStillWork) {
  run_world(3, [](comm::Communicator& comm) {
    Layout layout = kLayout;
    if (comm.rank() == 0) layout.shapes[0] = {3, 4};
    expect_mismatch(create(comm, layout), "gradient 0");
    // The communicator is still usable: a refused layout sends nothing else.
    EXPECT_EQ(create(comm, kLayout).status, DT_OK);
  });
}

}  // namespace
}  // namespace dtrain::test
