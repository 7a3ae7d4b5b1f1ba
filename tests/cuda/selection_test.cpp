// Which device a rank uses and which path its CUDA tensors take: pure
// functions, checked without a GPU.
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/staged/path.hpp"
#include "device/selection.hpp"
#include "dtrain/comm.h"

namespace dtrain::test {
namespace {

using comm::staged::choose_path;
using comm::staged::decode;
using comm::staged::DeviceCaps;
using comm::staged::DevicePath;
using comm::staged::encode;
using device::choose_device;

template <typename F>
std::pair<dt_status, std::string> outcome(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.status(), e.what()};
  }
  return {DT_OK, {}};
}

TEST(DeviceChoice, LocalRankModuloDevices) {
  EXPECT_EQ(choose_device(DT_UNDEF, 0, 8, true), 0);
  EXPECT_EQ(choose_device(DT_UNDEF, 5, 8, true), 5);
  EXPECT_EQ(choose_device(DT_UNDEF, 9, 8, true), 1);
  EXPECT_EQ(choose_device(DT_UNDEF, 3, 1, true), 0) << "ranks share the only GPU";
  EXPECT_EQ(choose_device(DT_UNDEF, -1, 2, true), 0);
  EXPECT_EQ(choose_device(DT_UNDEF, 3, 0, true), -1) << "no device: CPU only";
  EXPECT_EQ(choose_device(DT_UNDEF, 3, 0, false), -1);
}

TEST(DeviceChoice, ExplicitDevice) {
  EXPECT_EQ(choose_device(1, 0, 2, true), 1);
  auto [status, message] = outcome([] { choose_device(2, 0, 2, true); });
  EXPECT_EQ(status, DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(message, "options.device = 2 but this process sees 2 CUDA devices (0..1)");
  std::tie(status, message) = outcome([] { choose_device(-3, 0, 2, true); });
  EXPECT_EQ(status, DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("is negative"), std::string::npos) << message;
  std::tie(status, message) = outcome([] { choose_device(0, 0, 0, true); });
  EXPECT_EQ(status, DT_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("no CUDA device is usable on this machine"), std::string::npos) << message;
  std::tie(status, message) = outcome([] { choose_device(0, 0, 0, false); });
  EXPECT_EQ(status, DT_ERR_UNSUPPORTED);
  EXPECT_EQ(message, "options.device = 0: this build has no CUDA device support");
}

DeviceCaps gpu(const std::string& machine, const std::string& bus, bool nccl = true) {
  DeviceCaps caps;
  caps.device = 0;
  caps.machine = machine;
  caps.bus_id = bus;
  caps.nccl = nccl;
  return caps;
}

TEST(DevicePathChoice, NcclWhenEveryRankHasItsOwnGpu) {
  const std::vector<DeviceCaps> ranks = {gpu("a", "0000:1a:00.0"), gpu("a", "0000:1b:00.0"),
                                         gpu("b", "0000:1a:00.0")};  // same bus id, other machine
  EXPECT_EQ(choose_path(DT_BACKEND_AUTO, ranks, 0).path, DevicePath::nccl);
  EXPECT_EQ(choose_path(DT_BACKEND_NCCL, ranks, 2).path, DevicePath::nccl);
  const auto ucx = choose_path(DT_BACKEND_UCX, ranks, 1);
  EXPECT_EQ(ucx.path, DevicePath::staged);
  EXPECT_EQ(ucx.reason, "options.backend = DT_BACKEND_UCX");
}

TEST(DevicePathChoice, StagedWhenRanksShareAGpu) {
  const std::vector<DeviceCaps> ranks = {gpu("a", "0000:1a:00.0"), gpu("a", "0000:1a:00.0")};
  const auto choice = choose_path(DT_BACKEND_AUTO, ranks, 1);
  EXPECT_EQ(choice.path, DevicePath::staged);
  EXPECT_EQ(choice.reason, "ranks 0 and 1 share the GPU 0000:1a:00.0 (NCCL needs one GPU per rank)");
  auto [status, message] = outcome([&] { choose_path(DT_BACKEND_NCCL, ranks, 0); });
  EXPECT_EQ(status, DT_ERR_UNSUPPORTED);
  EXPECT_EQ(message, "options.backend = DT_BACKEND_NCCL, but NCCL cannot serve this communicator: " + choice.reason);
}

TEST(DevicePathChoice, StagedWhenARankLacksNcclOrADevice) {
  std::vector<DeviceCaps> ranks = {gpu("a", "0000:1a:00.0"), gpu("b", "0000:1a:00.0", false)};
  auto choice = choose_path(DT_BACKEND_AUTO, ranks, 0);
  EXPECT_EQ(choice.path, DevicePath::staged);
  EXPECT_EQ(choice.reason, "rank 1 cannot load NCCL");

  ranks[1] = DeviceCaps{};  // a CPU-only rank
  ranks[1].machine = "b";
  choice = choose_path(DT_BACKEND_AUTO, ranks, 0);
  EXPECT_EQ(choice.path, DevicePath::staged);
  EXPECT_EQ(choice.reason, "rank 1 has no usable CUDA device");
  EXPECT_EQ(choose_path(DT_BACKEND_AUTO, ranks, 1).path, DevicePath::none) << "the CPU rank itself";
}

TEST(DevicePathChoice, WorldOfOne) {
  EXPECT_EQ(choose_path(DT_BACKEND_AUTO, {gpu("a", "x")}, 0).path, DevicePath::nccl);
  EXPECT_EQ(choose_path(DT_BACKEND_AUTO, {gpu("a", "x", false)}, 0).path, DevicePath::staged);
  EXPECT_EQ(choose_path(DT_BACKEND_AUTO, {DeviceCaps{}}, 0).path, DevicePath::none);
  auto [status, message] = outcome([] { choose_path(DT_BACKEND_NCCL, {DeviceCaps{}}, 0); });
  EXPECT_EQ(status, DT_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("rank 0 has no usable CUDA device"), std::string::npos) << message;
}

TEST(DeviceCapsText, RoundTripsAndRejectsGarbage) {
  DeviceCaps caps = gpu("3f6c0a1e-boot-id", "0000:c1:00.0");
  caps.device = 3;
  auto back = decode(encode(caps));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->device, 3);
  EXPECT_EQ(back->machine, caps.machine);
  EXPECT_EQ(back->bus_id, caps.bus_id);
  EXPECT_TRUE(back->nccl);
  back = decode(encode(DeviceCaps{}));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->device, -1);
  EXPECT_FALSE(back->nccl);
  EXPECT_FALSE(decode("").has_value());
  EXPECT_FALSE(decode("device=0\nmachine=a\nbus=b\n").has_value()) << "nccl missing";
  EXPECT_FALSE(decode("device=zero\nmachine=a\nbus=b\nnccl=1\n").has_value());
  EXPECT_FALSE(decode("device=0\nmachine=a\nbus=b\nnccl=2\n").has_value());
  EXPECT_FALSE(decode("device=0\nmachine=a\nbus=b\nnccl=1\ncolor=blue\n").has_value());
  EXPECT_FALSE(decode("garbage").has_value());
}

}  // namespace
}  // namespace dtrain::test
