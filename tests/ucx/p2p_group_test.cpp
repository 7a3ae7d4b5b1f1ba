// Grouped point-to-point over UCX: the exchange that deadlocks one blocking
// call at a time (every rank sending 8 MiB to both ring neighbours before
// receiving) completes as a group, on 2 to 4 ranks; groups match single
// sends and receives; a bad op refuses the group and starts nothing.

#include <gtest/gtest.h>

#include <vector>

#include "base/error.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

constexpr std::int64_t kLarge = (8 << 20) / 4;  // 8 MiB of float32

std::vector<float> pattern(int from, int tag, std::int64_t count) {
  std::vector<float> v(count);
  for (std::int64_t i = 0; i < count; ++i) v[i] = static_cast<float>(from * 1000 + tag * 10 + i % 7);
  return v;
}

comm::P2pOp op_of(int kind, const Tensor& tensor, int peer, int tag) {
  return comm::P2pOp{kind == DT_P2P_SEND, tensor.get(), peer, tag};
}

class UcxP2pGroup : public ::testing::TestWithParam<int> {};

TEST_P(UcxP2pGroup, RingNeighboursSendLargeBuffersBeforeReceiving) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    // Tag 1 travels rightwards, tag 2 leftwards; with two ranks both
    // neighbours are the same rank and the tags keep the messages apart.
    std::vector<float> to_right = pattern(me, 1, kLarge), to_left = pattern(me, 2, kLarge);
    std::vector<float> from_left(kLarge, -1.0f), from_right(kLarge, -1.0f);
    Tensor a(to_right.data(), kLarge, DType::f32), b(to_left.data(), kLarge, DType::f32);
    Tensor c(from_left.data(), kLarge, DType::f32), d(from_right.data(), kLarge, DType::f32);
    const std::vector<comm::P2pOp> ops{op_of(DT_P2P_SEND, a, right, 1), op_of(DT_P2P_SEND, b, left, 2),
                                     op_of(DT_P2P_RECV, c, left, 1), op_of(DT_P2P_RECV, d, right, 2)};
    wait(comm, comm.p2p_group(ops));
    EXPECT_EQ(from_left, pattern(left, 1, kLarge));
    EXPECT_EQ(from_right, pattern(right, 2, kLarge));
  });
}

TEST_P(UcxP2pGroup, GroupsMatchSingleCallsAndMessagesToOneself) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    std::vector<float> out = pattern(me, 3, 100), self_out = pattern(me, 4, 5);
    std::vector<float> in(100, -1.0f), self_in(5, -1.0f);
    Tensor o(out.data(), 100, DType::f32), so(self_out.data(), 5, DType::f32);
    Tensor i(in.data(), 100, DType::f32), si(self_in.data(), 5, DType::f32);
    // The group receives from the left what the left neighbour sends with a
    // single dt_send; its receive to itself is listed before its send.
    auto sent = comm.send(o.get(), right, 3);
    const std::vector<comm::P2pOp> ops{op_of(DT_P2P_RECV, si, me, 4), op_of(DT_P2P_RECV, i, left, 3),
                                     op_of(DT_P2P_SEND, so, me, 4)};
    wait(comm, comm.p2p_group(ops));
    wait(comm, sent);
    EXPECT_EQ(in, pattern(left, 3, 100));
    EXPECT_EQ(self_in, self_out);
    // A send to oneself is buffered: the group completes before its receive.
    wait(comm, comm.p2p_group({op_of(DT_P2P_SEND, so, me, 5)}));
    std::vector<float> later(5, -1.0f);
    Tensor l(later.data(), 5, DType::f32);
    wait(comm, comm.recv(l.get(), me, 5));
    EXPECT_EQ(later, self_out);
  });
}

TEST_P(UcxP2pGroup, ABadOpRefusesTheGroupAndStartsNothing) {
  run_world(GetParam(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    std::vector<float> first(3, 1.0f), second(3, 2.0f), in(3, -1.0f);
    Tensor f(first.data(), 3, DType::f32), s(second.data(), 3, DType::f32), r(in.data(), 3, DType::f32);
    // Kinds and tensors are the C API's to parse (tests/unit/capi_rooted_test.cpp).
    const comm::P2pOp good = op_of(DT_P2P_SEND, f, right, 9);
    const std::vector<std::vector<comm::P2pOp>> bad{
        {good, op_of(DT_P2P_SEND, f, n, 9)},
        {good, op_of(DT_P2P_RECV, r, left, -1)},
    };
    for (const auto& group : bad) {
      const std::string message = expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.p2p_group(group); });
      EXPECT_NE(message.find("ops[1]"), std::string::npos) << message;
    }
    expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.p2p_group({}); });
    // Had a refused group sent `first` with tag 9, it would arrive here
    // before `second`.
    const std::vector<comm::P2pOp> ops{op_of(DT_P2P_SEND, s, right, 9), op_of(DT_P2P_RECV, r, left, 9)};
    wait(comm, comm.p2p_group(ops));
    EXPECT_EQ(in, second);
  });
}

INSTANTIATE_TEST_SUITE_P(Ucx, UcxP2pGroup, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return std::to_string(param.param) + "ranks";
                         });

}  // namespace
}  // namespace dtrain::test
