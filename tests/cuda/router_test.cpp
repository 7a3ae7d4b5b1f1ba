// The router's choices, with recording backends in place of UCX and NCCL:
// which backend serves which operation, when NCCL is created, what is
// refused before anything starts, and how a failed creation is remembered.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/self/self_backend.hpp"
#include "comm/backends/staged/router.hpp"
#include "comm/communicator.hpp"
#include "common/host_tensor.hpp"
#include "fakes.hpp"

namespace dtrain::test {
namespace {

using comm::Backend;
using comm::ReduceOp;
using comm::RequestPtr;
using comm::staged::DevicePath;
using comm::staged::DeviceRouter;
using comm::staged::Devices;
using dtrain::testing::HostTensor;

// The stream each operation's first tensor carried, as "<label>.<op>".
using StreamLog = std::vector<std::pair<std::string, void*>>;

// A self backend that counts the operations it is given, by name, in a
// journal shared with the test, and logs their streams.
class Recording final : public Backend {
 public:
  Recording(std::string label, std::shared_ptr<std::map<std::string, int>> journal,
            std::shared_ptr<StreamLog> streams = std::make_shared<StreamLog>())
      : label_(std::move(label)), journal_(std::move(journal)), streams_(std::move(streams)) {}
  const char* name() const override { return label_.c_str(); }
  RequestPtr start(const comm::Collective& op) override {
    const char* kind = comm::call_kind_name(op.kind);
    if (op.kind == comm::CallKind::barrier) {
      note(kind);
    } else {
      note(kind, op.kind == comm::CallKind::p2p_group ? op.group.front().buf
                 : op.kind == comm::CallKind::recv    ? op.recv
                                                      : op.send);
    }
    return inner_.start(op);
  }
  std::unique_ptr<Backend> split(int color, int, int* new_rank, int* new_size) override {
    note("split");
    if (color == DT_UNDEF) return nullptr;
    *new_rank = 0;
    *new_size = 1;
    return std::make_unique<Recording>(label_ + "/child", journal_, streams_);
  }
  void abort() override {
    note("abort");
    inner_.abort();
  }

 private:
  void note(const std::string& op) { ++(*journal_)[label_ + "." + op]; }
  void note(const std::string& op, const TensorView& first) {
    note(op);
    streams_->emplace_back(label_ + "." + op, first.stream);
  }
  std::string label_;
  std::shared_ptr<std::map<std::string, int>> journal_;
  std::shared_ptr<StreamLog> streams_;
  comm::SelfBackend inner_;
};

struct Fixture {
  std::shared_ptr<std::map<std::string, int>> journal = std::make_shared<std::map<std::string, int>>();
  std::shared_ptr<LaneStats> stats = std::make_shared<LaneStats>();
  std::shared_ptr<StreamLog> streams = std::make_shared<StreamLog>();
  int nccl_creations = 0;
  dt_status nccl_failure = DT_OK;
  std::vector<std::string> checked;

  std::unique_ptr<DeviceRouter> make(DevicePath path) {
    Devices devices;
    devices.device = 0;
    devices.timeout_ms = 5000;
    devices.path = path;
    devices.make_nccl = [this](Backend&, int, int, const std::atomic<bool>&) -> std::unique_ptr<Backend> {
      ++nccl_creations;
      if (nccl_failure != DT_OK) raise(nccl_failure, "no NCCL today");
      return std::make_unique<Recording>("nccl", journal, streams);
    };
    devices.make_lanes = [this] { return fake_lanes(stats); };
    devices.check = [this](const TensorView&, const char* name) {
      checked.push_back(name);
      if (std::string(name) == "poisoned") raise(DT_ERR_INVALID_ARGUMENT, "poisoned: not device memory");
    };
    return std::make_unique<DeviceRouter>(std::make_unique<Recording>("host", journal, streams), devices);
  }
  int count(const std::string& key) const {
    auto it = journal->find(key);
    return it == journal->end() ? 0 : it->second;
  }
};

dt_status status_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return DT_OK;
}

TEST(Router, HostTensorsStayOnTheHostBackend) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  EXPECT_STREQ(router->name(), "host+nccl");
  std::vector<float> a(8, 1.0f), b(8, 0.0f);
  router->allreduce(view_of(a.data(), 8, DType::f32, Memory::host), view_of(b.data(), 8, DType::f32, Memory::host),
                    ReduceOp::sum);
  router->barrier();
  EXPECT_EQ(f.count("host.allreduce"), 1);
  EXPECT_EQ(f.count("host.barrier"), 1);
  EXPECT_EQ(f.nccl_creations, 0) << "NCCL is created on the first CUDA operation only";
  EXPECT_TRUE(f.checked.empty());
}

TEST(Router, CudaTensorsGoToNcclCreatedOnce) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  std::vector<float> a(8, 1.0f), b(8, 0.0f);
  auto da = view_of(a.data(), 8, DType::f32, Memory::cuda);
  auto db = view_of(b.data(), 8, DType::f32, Memory::cuda);
  router->allreduce(da, db, ReduceOp::sum);
  router->allgather(da, db);
  router->broadcast(da, 0);
  router->send(da, 0, 1);
  router->recv(db, 0, 1);
  router->barrier();
  EXPECT_EQ(f.nccl_creations, 1);
  EXPECT_EQ(f.count("nccl.allreduce"), 1);
  EXPECT_EQ(f.count("nccl.allgather"), 1);
  EXPECT_EQ(f.count("nccl.broadcast"), 1);
  EXPECT_EQ(f.count("nccl.send"), 1);
  EXPECT_EQ(f.count("nccl.recv"), 1);
  EXPECT_EQ(f.count("host.barrier"), 1) << "barriers run on the host backend";
  EXPECT_EQ(f.count("host.allreduce"), 0);
  EXPECT_EQ(f.checked, (std::vector<std::string>{"send", "recv", "send", "recv", "buf", "buf", "buf"}));
}

// The caller's stream (dt_allreduce's `stream`) reaches the backend that
// runs the operation: the C API puts it in the views, the Communicator and
// the router pass them on.
TEST(Router, TheCallersStreamReachesTheBackend) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  Backend* raw = router.get();
  comm::Communicator communicator(0, 1, 5000, std::move(router));
  void* const stream = reinterpret_cast<void*>(std::uintptr_t{0x7000});
  HostTensor<float> a(8, 1.0f), b(8, 0.0f);
  TensorView send = view_of(a.values.data(), 8, DType::f32, Memory::host);
  TensorView recv = view_of(b.values.data(), 8, DType::f32, Memory::host);
  send.stream = recv.stream = stream;
  communicator.wait(communicator.allreduce(send, recv, DT_SUM), -1);
  communicator.wait(communicator.broadcast(view_of(b.values.data(), 8, DType::f32, Memory::host), 0), -1);
  EXPECT_EQ(*f.streams, (StreamLog{{"host.allreduce", stream}, {"host.broadcast", nullptr}}));

  // CUDA views (which the communicator would refuse here, without a device)
  // keep theirs on the way to NCCL.
  f.streams->clear();
  auto da = view_of(a.values.data(), 8, DType::f32, Memory::cuda);
  da.stream = stream;
  raw->allreduce(da, da, ReduceOp::sum);
  raw->send(da, 0, 1);
  EXPECT_EQ(*f.streams, (StreamLog{{"nccl.allreduce", stream}, {"nccl.send", stream}}));
}

TEST(Router, MixingHostAndCudaIsRefusedWithNccl) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  std::vector<float> a(8, 1.0f), b(8, 0.0f);
  std::string message;
  EXPECT_EQ(status_of([&] {
              router->allreduce(view_of(a.data(), 8, DType::f32, Memory::host),
                                view_of(b.data(), 8, DType::f32, Memory::cuda), ReduceOp::sum);
            }, &message),
            DT_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("allreduce: host and CUDA tensors in one operation"), std::string::npos) << message;
  EXPECT_EQ(f.nccl_creations, 0) << "refused before anything starts";
}

TEST(Router, MixingIsStagedOnTheStagedPath) {
  Fixture f;
  auto router = f.make(DevicePath::staged);
  EXPECT_STREQ(router->name(), "host+staged");
  std::vector<float> a(8, 2.0f), b(8, 0.0f);
  RequestPtr request = router->allreduce(view_of(a.data(), 8, DType::f32, Memory::host),
                                         view_of(b.data(), 8, DType::f32, Memory::cuda), ReduceOp::sum);
  ASSERT_TRUE(router->wait(request, comm::Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(request->status(), DT_OK) << request->message();
  EXPECT_EQ(b[7], 2.0f);
  EXPECT_EQ(f.count("host.allreduce"), 1) << "the staged path runs the host backend's operation";
  EXPECT_EQ(f.stats->to_device.load(), 1);
  EXPECT_EQ(f.stats->to_host.load(), 0) << "a host send is used in place";
}

TEST(Router, RefusalsNameTheTensor) {
  Fixture f;
  auto router = f.make(DevicePath::staged);
  std::vector<float> a(8, 1.0f);
  auto other_device = view_of(a.data(), 8, DType::f32, Memory::cuda);
  other_device.device_id = 1;
  std::string message;
  EXPECT_EQ(status_of([&] { router->broadcast(other_device, 0); }, &message), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("buf is on CUDA device 1 but this communicator uses device 0"), std::string::npos)
      << message;

  // The memory check (cudaPointerGetAttributes on a GPU) runs before any copy.
  auto fine = view_of(a.data(), 8, DType::f32, Memory::cuda);
  RequestPtr request;
  EXPECT_EQ(status_of([&] { request = router->allreduce(fine, fine, ReduceOp::sum); }), DT_OK);
  EXPECT_EQ(f.checked.size(), 2u);
  // The staged copies write back into `a`: they must be done before it goes.
  ASSERT_TRUE(request);
  ASSERT_TRUE(router->wait(request, comm::Clock::now() + std::chrono::seconds(10)));

  Fixture none;
  auto cpu_only = none.make(DevicePath::none);
  EXPECT_STREQ(cpu_only->name(), "host");
  EXPECT_EQ(status_of([&] { cpu_only->broadcast(fine, 0); }, &message), DT_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("no CUDA device"), std::string::npos) << message;
}

// What a strategy checks at creation (a DDP's gradients): the refusals an
// operation would give, with nothing sent and no device path set up.
TEST(Router, PlacementIsCheckedWithoutCommunicating) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  std::vector<float> a(8, 1.0f);
  auto other_device = view_of(a.data(), 8, DType::f32, Memory::cuda);
  other_device.device_id = 1;
  std::string message;
  EXPECT_EQ(status_of([&] { router->check_placement(other_device, "gradients[2]"); }, &message),
            DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("gradients[2] is on CUDA device 1"), std::string::npos) << message;
  auto fine = view_of(a.data(), 8, DType::f32, Memory::cuda);
  EXPECT_EQ(status_of([&] { router->check_placement(fine, "gradients[0]"); }), DT_OK);
  EXPECT_EQ(status_of([&] { router->check_placement(view_of(a.data(), 8, DType::f32, Memory::host), "h"); }), DT_OK);
  EXPECT_EQ(f.checked, std::vector<std::string>{"gradients[0]"});
  EXPECT_EQ(f.nccl_creations, 0);
  EXPECT_TRUE(f.journal->empty());

  Fixture none;
  auto cpu_only = none.make(DevicePath::none);
  EXPECT_EQ(status_of([&] { cpu_only->check_placement(fine, "gradients[0]"); }, &message), DT_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("gradients[0]: this communicator has no CUDA device"), std::string::npos) << message;
}

TEST(Router, FailedNcclCreationIsRemembered) {
  Fixture f;
  f.nccl_failure = DT_ERR_TIMEOUT;
  auto router = f.make(DevicePath::nccl);
  std::vector<float> a(8, 1.0f);
  auto da = view_of(a.data(), 8, DType::f32, Memory::cuda);
  std::string first, second;
  EXPECT_EQ(status_of([&] { router->allreduce(da, da, ReduceOp::sum); }, &first), DT_ERR_TIMEOUT);
  EXPECT_EQ(status_of([&] { router->broadcast(da, 0); }, &second), DT_ERR_TIMEOUT);
  EXPECT_EQ(f.nccl_creations, 1) << "not tried again";
  EXPECT_NE(second.find("the NCCL communicator could not be created: no NCCL today"), std::string::npos) << second;
  // Host work goes on.
  EXPECT_EQ(status_of([&] { router->allreduce(view_of(a.data(), 8, DType::f32, Memory::host),
                                              view_of(a.data(), 8, DType::f32, Memory::host), ReduceOp::sum); }),
            DT_OK);
}

TEST(Router, ConnectDevicesCreatesNcclAtOnce) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  router->connect_devices();
  EXPECT_EQ(f.nccl_creations, 1);
  Fixture g;
  auto staged = g.make(DevicePath::staged);
  staged->connect_devices();
  EXPECT_EQ(g.nccl_creations, 0);
}

TEST(Router, SplitChildrenCreateTheirOwnNccl) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  int rank = -1, size = 0;
  std::vector<float> a(8, 1.0f);
  auto da = view_of(a.data(), 8, DType::f32, Memory::cuda);
  router->allreduce(da, da, ReduceOp::sum);
  EXPECT_EQ(f.nccl_creations, 1);
  // Only the host backend splits, also once NCCL exists; the child creates
  // its own NCCL communicator at its first CUDA operation.
  auto child = router->split(3, 0, &rank, &size);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(f.count("host.split"), 1);
  EXPECT_EQ(f.count("nccl.split"), 0);
  EXPECT_EQ(f.nccl_creations, 1);
  child->allreduce(da, da, ReduceOp::sum);
  EXPECT_EQ(f.nccl_creations, 2);
  // DT_UNDEF takes part in the host split and gets nothing.
  EXPECT_EQ(router->split(DT_UNDEF, 0, &rank, &size), nullptr);
  EXPECT_EQ(f.count("host.split"), 2);
  EXPECT_EQ(f.count("nccl.split"), 0);
}

TEST(Router, AbortReachesEveryBackend) {
  Fixture f;
  auto router = f.make(DevicePath::nccl);
  std::vector<float> a(8, 1.0f);
  auto da = view_of(a.data(), 8, DType::f32, Memory::cuda);
  router->allreduce(da, da, ReduceOp::sum);
  router->abort();
  EXPECT_EQ(f.count("host.abort"), 1);
  EXPECT_EQ(f.count("nccl.abort"), 1);
}

}  // namespace
}  // namespace dtrain::test
