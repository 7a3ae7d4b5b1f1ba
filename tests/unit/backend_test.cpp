// The backend interface (comm/backend.hpp): every call of a kind reaches the
// backend's one entry as the descriptor of that kind, and a kind a backend
// does not run is refused naming the backend and the operation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.hpp"
#include "comm/backend.hpp"
#include "comm/backends/self/self_backend.hpp"

namespace dtrain {
namespace {

using comm::CallKind;
using comm::Collective;
using comm::ReduceOp;
using comm::RequestPtr;

// Runs allreduce alone and keeps every descriptor it is given.
class AllreduceOnly final : public comm::Backend {
 public:
  const char* name() const override { return "allreduce-only"; }
  RequestPtr start(const Collective& op) override {
    seen.push_back(op);
    if (op.kind != CallKind::allreduce) unsupported(op);
    return self_.start(op);
  }
  std::unique_ptr<comm::Backend> split(int, int, int*, int*) override { return nullptr; }
  void abort() override {}

  std::vector<Collective> seen;

 private:
  comm::SelfBackend self_;
};

TensorView view_of(std::vector<float>& values) {
  TensorView view;
  view.data = values.data();
  view.count = static_cast<std::int64_t>(values.size());
  return view;
}

TEST(Backend, EachCallArrivesAsItsDescriptor) {
  AllreduceOnly backend;
  std::vector<float> a(6, 1.0f), b(6, 0.0f);
  const TensorView send = view_of(a), recv = view_of(b);
  const auto refused = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return e.status();
    }
    return DT_OK;
  };
  EXPECT_EQ(backend.allreduce(send, recv, ReduceOp::max)->status(), DT_OK);
  EXPECT_EQ(b, a);
  EXPECT_EQ(refused([&] { backend.reduce(send, recv, ReduceOp::min, 2); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.scatter(send, recv, 1); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.alltoallv(send, {1, 5}, recv, {2, 4}); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.reduce_scatterv(send, {4, 2}, recv, ReduceOp::prod); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.send(send, 3, 7); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.recv(recv, 4, 9); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.broadcast(recv, 1); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.p2p_group({{true, send, 1, 2}, {false, recv, 0, 3}}); }), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(refused([&] { backend.barrier(); }), DT_ERR_UNSUPPORTED);

  const std::vector<Collective>& seen = backend.seen;
  ASSERT_EQ(seen.size(), 10u);
  EXPECT_EQ(seen[0].kind, CallKind::allreduce);
  EXPECT_EQ(seen[0].op, ReduceOp::max);
  EXPECT_EQ(seen[0].send.data, a.data());
  EXPECT_EQ(seen[0].recv.data, b.data());
  EXPECT_EQ(seen[1].kind, CallKind::reduce);
  EXPECT_EQ(seen[1].op, ReduceOp::min);
  EXPECT_EQ(seen[1].root, 2);
  EXPECT_EQ(seen[2].kind, CallKind::scatter);
  EXPECT_EQ(seen[2].root, 1);
  EXPECT_EQ(seen[3].kind, CallKind::alltoallv);
  EXPECT_EQ(seen[3].send_counts, (std::vector<std::int64_t>{1, 5}));
  EXPECT_EQ(seen[3].recv_counts, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(seen[4].kind, CallKind::reduce_scatterv);
  EXPECT_EQ(seen[4].recv_counts, (std::vector<std::int64_t>{4, 2}));
  EXPECT_EQ(seen[4].op, ReduceOp::prod);
  EXPECT_EQ(seen[5].kind, CallKind::send);
  EXPECT_EQ(seen[5].send.data, a.data());
  EXPECT_EQ(seen[5].peer, 3);
  EXPECT_EQ(seen[5].tag, 7);
  EXPECT_EQ(seen[6].kind, CallKind::recv);
  EXPECT_EQ(seen[6].recv.data, b.data());
  EXPECT_EQ(seen[6].peer, 4);
  EXPECT_EQ(seen[6].tag, 9);
  EXPECT_EQ(seen[7].kind, CallKind::broadcast);
  EXPECT_EQ(seen[7].send.data, b.data());
  EXPECT_EQ(seen[7].recv.data, b.data());
  EXPECT_EQ(seen[7].root, 1);
  EXPECT_EQ(seen[8].kind, CallKind::p2p_group);
  ASSERT_EQ(seen[8].group.size(), 2u);
  EXPECT_TRUE(seen[8].group[0].is_send);
  EXPECT_EQ(seen[8].group[1].tag, 3);
  EXPECT_EQ(seen[9].kind, CallKind::barrier);
}

TEST(Backend, AKindItDoesNotRunIsRefusedByName) {
  AllreduceOnly backend;
  std::vector<float> a(4), b(4);
  try {
    backend.gather(view_of(a), view_of(b), 0);
    FAIL() << "gather was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_UNSUPPORTED);
    EXPECT_STREQ(e.what(), "the allreduce-only backend does not implement gather");
  }
}

}  // namespace
}  // namespace dtrain
