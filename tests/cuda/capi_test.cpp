// What a trainer sees through the C API about CUDA and NCCL on the machine
// the tests run on: the build info, CUDA tensors refused where no device is
// usable, and the backend and device options. Written for both kinds of
// machine; the expectations that need "no device" skip where there is one.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/cuda_device.hpp"
#include "common/host_tensor.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::HostTensor;

std::string last() { return dt_error_last(); }
std::string info() { return dt_build_info(); }
bool has_device() { return dtrain::testing::cuda_device_present(); }

TEST(CudaBuildInfo, SaysWhatIsCompiledAndPresent) {
  const std::string text = info();
#ifdef DTRAIN_TEST_CUDA
  EXPECT_NE(text.find("; devices: cpu, cuda;"), std::string::npos) << text;
  const bool none = text.find("; cuda: compiled, no device;") != std::string::npos;
  const bool some = text.find("; cuda: compiled, ") != std::string::npos && text.find(" device") != std::string::npos;
  EXPECT_TRUE(none || some) << text;
#else
  EXPECT_NE(text.find("; devices: cpu;"), std::string::npos) << text;
  EXPECT_NE(text.find("; cuda: not compiled;"), std::string::npos) << text;
#endif
#ifdef DTRAIN_TEST_NCCL
  EXPECT_NE(text.find("backends: self, ucx, nccl, staged;"), std::string::npos) << text;
  EXPECT_EQ(text.find("; nccl: not compiled"), std::string::npos) << text;
#else
  EXPECT_EQ(text.find("nccl,"), std::string::npos) << text;
  EXPECT_NE(text.find("; nccl: not compiled"), std::string::npos) << text;
#endif
}

TEST(CudaRefusal, CudaTensorsWithoutADevice) {
  if (has_device()) GTEST_SKIP() << "this machine has a CUDA device (" << info() << ")";
  HostTensor<float> buf(4);
  buf.tensor.device = {kDLCUDA, 0};
  int64_t count = -1;
  EXPECT_EQ(dt_tensor_check(&buf.tensor, &count), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(count, -1) << "an invalid argument changes nothing";
#ifdef DTRAIN_TEST_CUDA
  EXPECT_EQ(last().rfind("tensor: CUDA tensors need a CUDA device, and none is usable here (", 0), 0u) << last();
#else
  EXPECT_EQ(last(), "tensor: CUDA tensors need a CUDA device, and this build has no CUDA support");
#endif

  dt_comm* comm = nullptr;
  ASSERT_EQ(dt_comm_create(&comm, nullptr), DT_OK) << last();
  HostTensor<float> host(4, 1.0f);
  EXPECT_EQ(dt_allreduce(comm, &host.tensor, &buf.tensor, DT_SUM, nullptr, nullptr), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(last().rfind("recv: CUDA tensors need a CUDA device", 0), 0u) << last();
  EXPECT_EQ(dt_send(comm, &buf.tensor, 0, 0, nullptr, nullptr), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(last().rfind("buf: CUDA tensors", 0), 0u) << last();
  EXPECT_EQ(dt_barrier(comm), DT_OK) << "a refusal leaves the communicator usable";
  EXPECT_EQ(dt_comm_destroy(comm), DT_OK);
}

// comm.h: `stream` orders operations on CUDA tensors and is ignored for
// host tensors, so any value (it is never dereferenced for them) works.
TEST(CudaStream, IgnoredForHostTensors) {
  dt_comm* comm = nullptr;
  ASSERT_EQ(dt_comm_create(&comm, nullptr), DT_OK) << last();
  void* const stream = reinterpret_cast<void*>(std::uintptr_t{0xdead0});
  HostTensor<float> send(4, 3.0f);
  HostTensor<float> recv(4, 0.0f);
  EXPECT_EQ(dt_allreduce(comm, &send.tensor, &recv.tensor, DT_SUM, stream, nullptr), DT_OK) << last();
  EXPECT_EQ(recv.values, std::vector<float>(4, 3.0f));
  dt_request* req = nullptr;
  EXPECT_EQ(dt_broadcast(comm, &recv.tensor, 0, stream, &req), DT_OK) << last();
  EXPECT_EQ(dt_request_wait(req, -1), DT_OK) << last();
  dt_request_free(req);
  HostTensor<float> in(4, 0.0f);
  EXPECT_EQ(dt_recv(comm, &in.tensor, 0, 3, stream, &req), DT_OK) << last();
  EXPECT_EQ(dt_send(comm, &send.tensor, 0, 3, stream, nullptr), DT_OK) << last();
  EXPECT_EQ(dt_request_wait(req, -1), DT_OK) << last();
  dt_request_free(req);
  EXPECT_EQ(in.values, send.values);
  EXPECT_EQ(dt_comm_destroy(comm), DT_OK);
}

TEST(CudaStream, CudaTensorsOnAStreamWithoutADevice) {
  if (has_device()) GTEST_SKIP() << "this machine has a CUDA device (" << info() << ")";
  dt_comm* comm = nullptr;
  ASSERT_EQ(dt_comm_create(&comm, nullptr), DT_OK) << last();
  HostTensor<float> buf(4);
  buf.tensor.device = {kDLCUDA, 0};
  void* const legacy_default = reinterpret_cast<void*>(std::uintptr_t{1});  // cudaStreamLegacy
  EXPECT_EQ(dt_allreduce(comm, &buf.tensor, &buf.tensor, DT_SUM, legacy_default, nullptr), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(last().rfind("send: CUDA tensors need a CUDA device", 0), 0u) << last();
  EXPECT_EQ(dt_comm_destroy(comm), DT_OK);
}

TEST(CudaOptions, DeviceOptionWithoutADevice) {
  if (has_device()) GTEST_SKIP() << "this machine has a CUDA device (" << info() << ")";
  dt_comm* comm = nullptr;
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.device = 0;
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(comm, nullptr);
#ifdef DTRAIN_TEST_CUDA
  EXPECT_NE(last().find("options.device = 0: no CUDA device is usable on this machine"), std::string::npos) << last();
#else
  EXPECT_EQ(last(), "options.device = 0: this build has no CUDA device support");
#endif
  opts.device = -4;
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("options.device = -4 is negative"), std::string::npos) << last();
}

TEST(CudaOptions, NcclBackendWithoutADevice) {
  if (has_device()) GTEST_SKIP() << "this machine has a CUDA device (" << info() << ")";
  dt_comm* comm = nullptr;
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.backend = DT_BACKEND_NCCL;
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(comm, nullptr);
#ifdef DTRAIN_TEST_NCCL
  EXPECT_EQ(last(), "options.backend = DT_BACKEND_NCCL, but NCCL cannot serve this communicator: rank 0 has no "
                    "usable CUDA device")
      << last();
#else
  EXPECT_EQ(last(), "options.backend = DT_BACKEND_NCCL: this build has no NCCL backend");
#endif
  // AUTO and UCX still give a CPU communicator.
  for (dt_backend backend : {DT_BACKEND_AUTO, DT_BACKEND_UCX}) {
    opts.backend = backend;
    ASSERT_EQ(dt_comm_create(&comm, &opts), DT_OK) << last();
    EXPECT_EQ(dt_comm_destroy(comm), DT_OK);
  }
}

}  // namespace
