// CUDA tensors through the C API with one process per rank, under dtrun:
// dt_comm_create from the environment picks the device (local rank modulo
// the devices) and the path: NCCL when every rank has its own GPU and NCCL
// loads, the staged path over UCX when ranks share a GPU (or with
// DTRAIN_TEST_BACKEND=ucx). Exits 77 (skipped) without a CUDA device.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "common/gpu_program.hpp"
#include "dtrain.h"

namespace {

std::string last() { return dt_error_last(); }

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}

struct DeviceFloats {
  float* data = nullptr;
  std::int64_t shape;
  DLTensor tensor{};
  DeviceFloats(const std::vector<float>& values, int device) : shape(static_cast<std::int64_t>(values.size())) {
    check(cudaMalloc(reinterpret_cast<void**>(&data), values.size() * sizeof(float) + 4), "cudaMalloc");
    check(cudaMemcpy(data, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    // A copy from pageable memory may return before its transfer lands, and
    // the tests then write on non-blocking streams, which are not ordered
    // after the legacy stream's copy: the initial values could land last.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    tensor.data = data;
    tensor.device = {kDLCUDA, device};
    tensor.ndim = 1;
    tensor.dtype = {kDLFloat, 32, 1};
    tensor.shape = &shape;
  }
  ~DeviceFloats() { cudaFree(data); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  DLTensor* operator&() { return &tensor; }
  std::vector<float> read() const {
    std::vector<float> values(static_cast<std::size_t>(shape));
    check(cudaMemcpy(values.data(), data, values.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return values;
  }
};

float value(int rank, std::int64_t i) { return static_cast<float>((rank + 1) * 4 + i % 509); }

class Ranks : public ::testing::Test {
 protected:
  void SetUp() override {
    dt_comm_options opts = DT_COMM_OPTIONS_INIT;
    const char* backend = std::getenv("DTRAIN_TEST_BACKEND");
    if (backend != nullptr && std::strcmp(backend, "ucx") == 0) opts.backend = DT_BACKEND_UCX;
    ASSERT_EQ(dt_comm_create(&comm_, &opts), DT_OK) << last();
    dt_comm_rank(comm_, &rank_);
    dt_comm_size(comm_, &size_);
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    const char* local = std::getenv("DTRAIN_LOCAL_RANK");
    device_ = (local ? std::atoi(local) : 0) % devices;
    check(cudaSetDevice(device_), "cudaSetDevice");
  }
  void TearDown() override { dt_comm_destroy(comm_); }
  dt_comm* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
};

TEST_F(Ranks, Collectives) {
  for (std::int64_t count : {std::int64_t{5}, std::int64_t{(4 << 20) / 4 + 5}}) {
    std::vector<float> mine(count);
    for (std::int64_t i = 0; i < count; ++i) mine[i] = value(rank_, i);
    DeviceFloats send(mine, device_);
    DeviceFloats sum(std::vector<float>(count, -1.0f), device_);
    ASSERT_EQ(dt_allreduce(comm_, &send, &sum, DT_SUM, nullptr, nullptr), DT_OK) << last();
    auto got = sum.read();
    for (std::int64_t i = 0; i < count; i += 97) {
      float want = 0.0f;
      for (int r = 0; r < size_; ++r) want += value(r, i);
      ASSERT_EQ(got[i], want) << "allreduce element " << i;
    }
    DeviceFloats gathered(std::vector<float>(count * size_, -1.0f), device_);
    ASSERT_EQ(dt_allgather(comm_, &send, &gathered, nullptr, nullptr), DT_OK) << last();
    auto all = gathered.read();
    for (int r = 0; r < size_; ++r) ASSERT_EQ(all[r * count + count - 1], value(r, count - 1)) << "allgather";
    DeviceFloats block(std::vector<float>(count, -1.0f), device_);
    ASSERT_EQ(dt_reduce_scatter(comm_, &gathered, &block, DT_SUM, nullptr, nullptr), DT_OK) << last();
    EXPECT_EQ(block.read()[count - 1], size_ * value(rank_, count - 1)) << "reduce_scatter";
    ASSERT_EQ(dt_broadcast(comm_, &send, size_ - 1, nullptr, nullptr), DT_OK) << last();
    EXPECT_EQ(send.read()[count - 1], value(size_ - 1, count - 1)) << "broadcast";
    DeviceFloats a2a(std::vector<float>(count * size_, 0.0f), device_);
    ASSERT_EQ(dt_alltoall(comm_, &gathered, &a2a, nullptr, nullptr), DT_OK) << last();
    // Every rank sent the same gathered tensor: block q of it is rank q's data.
    EXPECT_EQ(a2a.read()[count - 1], value(rank_, count - 1)) << "alltoall";
  }
  EXPECT_EQ(dt_barrier(comm_), DT_OK) << last();
}

TEST_F(Ranks, PointToPointRing) {
  const std::int64_t count = 100003;
  std::vector<float> mine(count);
  for (std::int64_t i = 0; i < count; ++i) mine[i] = value(rank_, i);
  DeviceFloats out(mine, device_), in(std::vector<float>(count, 0.0f), device_);
  const int next = (rank_ + 1) % size_;
  const int prev = (rank_ + size_ - 1) % size_;
  dt_request* r = nullptr;
  dt_request* s = nullptr;
  // Receive first on even ranks, send first on odd ones: NCCL's pairing rule.
  if (rank_ % 2 == 0) {
    ASSERT_EQ(dt_recv(comm_, &in, prev, 0, nullptr, &r), DT_OK) << last();
    ASSERT_EQ(dt_send(comm_, &out, next, 0, nullptr, &s), DT_OK) << last();
  } else {
    ASSERT_EQ(dt_send(comm_, &out, next, 0, nullptr, &s), DT_OK) << last();
    ASSERT_EQ(dt_recv(comm_, &in, prev, 0, nullptr, &r), DT_OK) << last();
  }
  EXPECT_EQ(dt_request_wait(s, -1), DT_OK) << last();
  EXPECT_EQ(dt_request_wait(r, -1), DT_OK) << last();
  dt_request_free(s);
  dt_request_free(r);
  EXPECT_EQ(in.read()[count - 1], value(prev, count - 1));
}

TEST_F(Ranks, SplitInHalves) {
  dt_comm* half = nullptr;
  ASSERT_EQ(dt_comm_split(&half, comm_, rank_ % 2, rank_), DT_OK) << last();
  ASSERT_NE(half, nullptr);
  int size = 0;
  dt_comm_size(half, &size);
  DeviceFloats ones(std::vector<float>(16, 1.0f), device_);
  ASSERT_EQ(dt_allreduce(half, &ones, &ones, DT_SUM, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(ones.read()[15], static_cast<float>(size));
  dt_comm_destroy(half);
}

// DDP over CUDA gradients: buckets on the device, gradients written by
// backward on the trainer's own stream just before they are marked (so a
// DDP that did not order its copies after that stream would read stale
// values), averaged exactly in f32 and within bf16's rounding compressed.
TEST_F(Ranks, DdpAveragesCudaGradients) {
  const std::vector<std::int64_t> counts{5, 70001, 3};
  cudaStream_t backward = nullptr;
  check(cudaStreamCreateWithFlags(&backward, cudaStreamNonBlocking), "cudaStreamCreate");
  for (dt_ddp_compression compression : {DT_DDP_COMPRESS_NONE, DT_DDP_COMPRESS_BF16}) {
    std::vector<std::unique_ptr<DeviceFloats>> grads;
    std::vector<const DLTensor*> tensors;
    for (std::int64_t count : counts) {
      grads.push_back(std::make_unique<DeviceFloats>(std::vector<float>(count, -7.0f), device_));
      tensors.push_back(&*grads.back());
    }
    dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
    opts.bucket_bytes = 1024;  // the big gradient alone; the small ones together
    opts.compression = compression;
    opts.stream = backward;
    dt_ddp* ddp = nullptr;
    ASSERT_EQ(dt_ddp_create(&ddp, comm_, tensors.data(), tensors.size(), &opts), DT_OK) << last();
    for (int step = 0; step < 2; ++step) {
      std::vector<std::vector<float>> mine(counts.size());
      for (std::size_t g = counts.size(); g-- > 0;) {
        mine[g].resize(counts[g]);
        for (std::int64_t i = 0; i < counts[g]; ++i) mine[g][i] = value(rank_ + step, i + 3 * g) / 8.0f;
        // "backward": an asynchronous write on the trainer's stream, then the mark.
        check(cudaMemcpyAsync(grads[g]->data, mine[g].data(), counts[g] * sizeof(float), cudaMemcpyHostToDevice,
                              backward),
              "cudaMemcpyAsync");
        ASSERT_EQ(dt_ddp_mark_ready(ddp, g), DT_OK) << last();
      }
      ASSERT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << last();
      check(cudaStreamSynchronize(backward), "cudaStreamSynchronize");
      for (std::size_t g = 0; g < counts.size(); ++g) {
        const auto got = grads[g]->read();
        for (std::int64_t i = 0; i < counts[g]; i += 13) {
          double want = 0.0;
          for (int r = 0; r < size_; ++r) want += value(r + step, i + 3 * g) / 8.0 / size_;
          const double tolerance = compression == DT_DDP_COMPRESS_NONE ? 1e-6 * std::abs(want) : 2e-2 * std::abs(want);
          ASSERT_NEAR(got[i], want, tolerance) << "compression " << compression << ", step " << step
                                               << ", gradient " << g << ", element " << i;
        }
      }
    }
    EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK) << last();
  }
  check(cudaStreamDestroy(backward), "cudaStreamDestroy");
}

// Parameters on the device start identical on every rank.
TEST_F(Ranks, DdpBroadcastsCudaParameters) {
  std::vector<float> mine(1000);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(rank_, static_cast<std::int64_t>(i));
  DeviceFloats param(mine, device_);
  DLTensor* params[] = {&param};
  ASSERT_EQ(dt_ddp_broadcast_parameters(comm_, params, 1, 0), DT_OK) << last();
  const auto got = param.read();
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], value(0, static_cast<std::int64_t>(i))) << i;
}

}  // namespace

int main(int argc, char** argv) { return dtrain::testing::gpu_test_main(argc, argv); }
