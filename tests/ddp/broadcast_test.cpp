// Parameters broadcast from one rank make every replica identical, whatever
// their dtypes; ranks that disagree about the list are told so.

#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

#include "parallel/ddp/broadcast.hpp"
#include "tensors.hpp"

namespace dtrain::test {
namespace {

using parallel::ddp::broadcast_parameters;

class Broadcast : public ::testing::TestWithParam<int> {};

TEST_P(Broadcast, ReplicasBecomeIdenticalToRoot) {
  const int ranks = GetParam();
  const int root = ranks - 1;
  run_world(ranks, [root](comm::Communicator& comm) {
    auto fill = [](int rank, auto& buffer) {
      using Element = std::decay_t<decltype(buffer[0])>;
      for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<Element>(rank * 100 + i);
    };
    std::vector<float> weights(6);
    std::vector<std::int64_t> steps(4);
    std::vector<std::uint16_t> half(5);
    std::vector<double> scalar(1);
    std::vector<float> empty;
    std::vector<float> large(100000);
    fill(comm.rank(), weights);
    fill(comm.rank(), steps);
    fill(comm.rank(), half);
    fill(comm.rank(), scalar);
    fill(comm.rank(), large);
    TensorList list;
    list.add(weights, DType::f32, {2, 3});
    list.add(steps, DType::i64, {4});
    list.add(half, DType::bf16, {5});
    list.add(scalar, DType::f64, {});
    list.add(empty, DType::f32, {0, 3});
    list.add(large, DType::f32, {100000});
    broadcast_parameters(comm, list.get("parameters"), root);

    auto expect_root = [root, fill](const auto& buffer) {
      auto expected = buffer;
      fill(root, expected);
      EXPECT_EQ(buffer, expected);
    };
    expect_root(weights);
    expect_root(steps);
    expect_root(half);
    expect_root(scalar);
    expect_root(large);
  });
}

INSTANTIATE_TEST_SUITE_P(Worlds, Broadcast, ::testing::Values(1, 2, 3, 4),
                         [](const auto& param_info) { return std::to_string(param_info.param) + "_ranks"; });

TEST(BroadcastMismatch, ShapesAndRootsAreCompared) {
  run_world(3, [](comm::Communicator& comm) {
    std::vector<float> a(6);
    TensorList list;
    list.add(a, DType::f32, comm.rank() == 2 ? std::vector<std::int64_t>{3, 2} : std::vector<std::int64_t>{2, 3});
    Caught caught = catch_error([&] { broadcast_parameters(comm, list.get("parameters"), 0); });
    EXPECT_EQ(caught.status, DT_ERR_MISMATCH);
    EXPECT_NE(caught.message.find("parameter 0 is float32[2, 3] on rank 0 but float32[3, 2] on rank 2"),
              std::string::npos)
        << caught.message;

    TensorList same;
    same.add(a, DType::f32, {6});
    caught = catch_error([&] { broadcast_parameters(comm, same.get("parameters"), comm.rank() == 1 ? 1 : 0); });
    EXPECT_EQ(caught.status, DT_ERR_MISMATCH);
    EXPECT_NE(caught.message.find("root is 0 on rank 0 but 1 on rank 1"), std::string::npos) << caught.message;

    caught = catch_error([&] { broadcast_parameters(comm, same.get("parameters"), comm.rank() == 0 ? 5 : 0); });
    EXPECT_EQ(caught.status, comm.rank() == 0 ? DT_ERR_INVALID_ARGUMENT : DT_ERR_MISMATCH) << caught.message;
  });
}

}  // namespace
}  // namespace dtrain::test
