// CUDA tensors through the C API on a world of one: every operation (over
// NCCL when it loads, the staged path otherwise), requests that complete
// without a wait, splits, refusals of bad CUDA tensors, and deadlines and
// abort. Skipped, with a message, without a CUDA device.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "device/cpu/half.hpp"
#include "dtrain.h"

namespace dtrain::test {
namespace {

std::string last() { return dt_error_last(); }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

#define DT_REQUIRE_GPUS(n)                                                                                  \
  do {                                                                                                      \
    if (device_count() < (n)) {                                                                             \
      GTEST_SKIP() << "needs " << (n) << " CUDA device(s); this machine has " << device_count() << " ("     \
                   << dt_build_info() << ")";                                                               \
    }                                                                                                       \
  } while (0)

void cuda_ok(cudaError_t rc, const char* what) { ASSERT_EQ(rc, cudaSuccess) << what << ": " << cudaGetErrorString(rc); }

// A one-dimensional tensor in device memory, described for the C API.
template <typename T>
struct DeviceTensor {
  void* data = nullptr;
  std::int64_t shape;
  DLTensor tensor{};
  DeviceTensor(const std::vector<T>& values, DLDataType dtype, int device = 0)
      : shape(static_cast<std::int64_t>(values.size())) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    cuda_ok(cudaMalloc(&data, values.size() * sizeof(T) + 16), "cudaMalloc");
    cuda_ok(cudaMemcpy(data, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    // A copy from pageable memory may return before its transfer lands; the
    // tests write on non-blocking streams, which do not wait for it.
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cudaSetDevice(previous);
    tensor.data = data;
    tensor.device = {kDLCUDA, device};
    tensor.ndim = 1;
    tensor.dtype = dtype;
    tensor.shape = &shape;
  }
  ~DeviceTensor() { cudaFree(data); }
  DeviceTensor(const DeviceTensor&) = delete;  // tensor.shape points into this object
  DeviceTensor& operator=(const DeviceTensor&) = delete;
  DLTensor* operator&() { return &tensor; }
  std::vector<T> read() const {
    std::vector<T> values(static_cast<std::size_t>(shape));
    cuda_ok(cudaMemcpy(values.data(), data, values.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return values;
  }
};

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kBF16{kDLBfloat, 16, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};

std::vector<float> iota_f(std::size_t n, float start = 0.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

class WorldOfOne : public ::testing::Test {
 protected:
  void SetUp() override {
    DT_REQUIRE_GPUS(1);
    ASSERT_EQ(dt_comm_create(&comm_, nullptr), DT_OK) << last();
  }
  void TearDown() override { dt_comm_destroy(comm_); }
  dt_comm* comm_ = nullptr;
};

TEST_F(WorldOfOne, Allreduce) {
  auto values = iota_f(1 << 20, -3.0f);
  DeviceTensor<float> send(values, kF32), recv(std::vector<float>(values.size(), -1.0f), kF32);
  for (dt_reduce_op op : {DT_SUM, DT_AVG, DT_MAX, DT_MIN, DT_PROD}) {
    ASSERT_EQ(dt_allreduce(comm_, &send, &recv, op, nullptr, nullptr), DT_OK) << last();
    EXPECT_EQ(recv.read(), values) << "op " << op;
  }
  // In place, bf16 and i64.
  std::vector<std::uint16_t> halves(1001);
  for (std::size_t i = 0; i < halves.size(); ++i) halves[i] = device::cpu::float_to_bf16(static_cast<float>(i));
  DeviceTensor<std::uint16_t> b(halves, kBF16);
  ASSERT_EQ(dt_allreduce(comm_, &b, &b, DT_SUM, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(b.read(), halves);
  std::vector<std::int64_t> longs(77, 1234567890123LL);
  DeviceTensor<std::int64_t> l(longs, kI64);
  ASSERT_EQ(dt_allreduce(comm_, &l, &l, DT_MAX, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(l.read(), longs);
}

// The stream argument orders the operation after the caller's work on it:
// the input is written on a non-blocking stream (which the communicator's
// own stream does not wait for) behind a long run of memsets, and the
// operation, started at once, must still read what that work wrote.
TEST_F(WorldOfOne, OperationsFollowTheCallersStream) {
  const std::size_t n = 1 << 20;
  auto values = iota_f(n, 1.0f);
  DeviceTensor<float> source(values, kF32);
  DeviceTensor<float> send(std::vector<float>(n, -1.0f), kF32), recv(std::vector<float>(n, -2.0f), kF32);
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  void* busy = nullptr;
  const std::size_t busy_bytes = std::size_t{256} << 20;
  cuda_ok(cudaMalloc(&busy, busy_bytes), "cudaMalloc");
  for (int blocking = 0; blocking < 2; ++blocking) {
    for (int i = 0; i < 40; ++i) cuda_ok(cudaMemsetAsync(busy, i, busy_bytes, stream), "cudaMemsetAsync");
    cuda_ok(cudaMemcpyAsync(send.data, source.data, n * sizeof(float), cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync");
    dt_request* req = nullptr;
    ASSERT_EQ(dt_allreduce(comm_, &send, &recv, DT_SUM, stream, blocking ? nullptr : &req), DT_OK) << last();
    if (!blocking) {
      ASSERT_EQ(dt_request_wait(req, -1), DT_OK) << last();
      dt_request_free(req);
    }
    EXPECT_EQ(recv.read(), values) << (blocking ? "blocking" : "with a request");
    cuda_ok(cudaMemsetAsync(send.data, 0xff, n * sizeof(float), stream), "cudaMemsetAsync");
    cuda_ok(cudaMemsetAsync(recv.data, 0xff, n * sizeof(float), stream), "cudaMemsetAsync");
  }
  cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaFree(busy);
  cudaStreamDestroy(stream);
}

TEST_F(WorldOfOne, EveryOtherCollective) {
  auto values = iota_f(4099);
  DeviceTensor<float> a(values, kF32), b(std::vector<float>(values.size(), -1.0f), kF32);
  ASSERT_EQ(dt_reduce_scatter(comm_, &a, &b, DT_SUM, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(b.read(), values);
  DeviceTensor<float> c(std::vector<float>(values.size(), -1.0f), kF32);
  ASSERT_EQ(dt_allgather(comm_, &a, &c, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(c.read(), values);
  ASSERT_EQ(dt_allgather(comm_, &a, &a, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(a.read(), values);
  ASSERT_EQ(dt_broadcast(comm_, &a, 0, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(a.read(), values);
  ASSERT_EQ(dt_alltoall(comm_, &a, &b, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(b.read(), values);
  const std::int64_t counts[] = {4000};
  ASSERT_EQ(dt_alltoallv(comm_, &a, counts, &a, counts, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(a.read(), values);
  EXPECT_EQ(dt_barrier(comm_), DT_OK) << last();
}

TEST_F(WorldOfOne, RootedUnevenAndGrouped) {
  auto values = iota_f(4099);
  const std::vector<float> untouched(values.size(), -1.0f);
  DeviceTensor<float> a(values, kF32), b(untouched, kF32), c(untouched, kF32);
  ASSERT_EQ(dt_reduce(comm_, &a, &b, DT_MAX, 0, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(b.read(), values);
  ASSERT_EQ(dt_gather(comm_, &a, &c, 0, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(c.read(), values);
  DeviceTensor<float> d(untouched, kF32);
  ASSERT_EQ(dt_scatter(comm_, &a, &d, 0, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(d.read(), values);
  // Counts short of the tensors: only the counted elements are written.
  const std::int64_t counts[] = {4000};
  DeviceTensor<float> part(std::vector<float>(values.begin(), values.begin() + 4000), kF32);
  DeviceTensor<float> e(untouched, kF32);
  ASSERT_EQ(dt_allgatherv(comm_, &part, &e, counts, nullptr, nullptr), DT_OK) << last();
  std::vector<float> want(values.begin(), values.begin() + 4000);
  want.resize(values.size(), -1.0f);
  EXPECT_EQ(e.read(), want);
  DeviceTensor<float> f(std::vector<float>(4000, -1.0f), kF32);
  ASSERT_EQ(dt_reduce_scatterv(comm_, &a, counts, &f, DT_SUM, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(f.read(), std::vector<float>(values.begin(), values.begin() + 4000));
  // A group to itself, the receive listed first.
  DeviceTensor<float> g(untouched, kF32);
  const dt_p2p_op ops[2] = {{DT_P2P_RECV, &g.tensor, 0, 1}, {DT_P2P_SEND, &a.tensor, 0, 1}};
  ASSERT_EQ(dt_p2p_group(comm_, ops, 2, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(g.read(), values);
}

TEST_F(WorldOfOne, MessagesToItself) {
  auto values = iota_f(300);
  DeviceTensor<float> out(values, kF32), in(std::vector<float>(300, 0.0f), kF32);
  // Receive first, then send; and the other way round.
  dt_request* r = nullptr;
  dt_request* s = nullptr;
  ASSERT_EQ(dt_recv(comm_, &in, 0, 5, nullptr, &r), DT_OK) << last();
  ASSERT_EQ(dt_send(comm_, &out, 0, 5, nullptr, &s), DT_OK) << last();
  EXPECT_EQ(dt_request_wait(s, -1), DT_OK) << last();
  EXPECT_EQ(dt_request_wait(r, -1), DT_OK) << last();
  dt_request_free(r);
  dt_request_free(s);
  EXPECT_EQ(in.read(), values);
  DeviceTensor<float> again(std::vector<float>(300, 0.0f), kF32);
  ASSERT_EQ(dt_send(comm_, &out, 0, 6, nullptr, &s), DT_OK) << last();
  ASSERT_EQ(dt_recv(comm_, &again, 0, 6, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(dt_request_wait(s, -1), DT_OK) << last();
  dt_request_free(s);
  EXPECT_EQ(again.read(), values);
}

TEST_F(WorldOfOne, RequestsCompleteWithoutWaiting) {
  DeviceTensor<float> a(iota_f(1 << 22), kF32);
  dt_request* req = nullptr;
  ASSERT_EQ(dt_allreduce(comm_, &a, &a, DT_SUM, nullptr, &req), DT_OK) << last();
  dt_status status = DT_INPROGRESS;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((status = dt_request_test(req)) == DT_INPROGRESS && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  EXPECT_EQ(status, DT_OK) << last();
  dt_request_free(req);
}

TEST_F(WorldOfOne, HostTensorsAndSplitsStillWork) {
  std::vector<float> host(16, 2.0f);
  std::int64_t shape = 16;
  DLTensor h{};
  h.data = host.data();
  h.device = {kDLCPU, 0};
  h.ndim = 1;
  h.dtype = kF32;
  h.shape = &shape;
  ASSERT_EQ(dt_allreduce(comm_, &h, &h, DT_SUM, nullptr, nullptr), DT_OK) << last();
  DeviceTensor<float> d(iota_f(16), kF32);
  ASSERT_EQ(dt_allreduce(comm_, &d, &d, DT_SUM, nullptr, nullptr), DT_OK) << last();
  dt_comm* child = nullptr;
  ASSERT_EQ(dt_comm_split(&child, comm_, 0, 0), DT_OK) << last();
  ASSERT_NE(child, nullptr);
  ASSERT_EQ(dt_allreduce(child, &d, &d, DT_SUM, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(d.read(), iota_f(16));
  dt_comm_destroy(child);
  ASSERT_EQ(dt_comm_split(&child, comm_, DT_UNDEF, 0), DT_OK) << last();
  EXPECT_EQ(child, nullptr);
}

TEST_F(WorldOfOne, BadCudaTensorsAreRefused) {
  std::vector<float> host(8, 1.0f);
  std::int64_t shape = 8;
  DLTensor lying{};
  lying.data = host.data();  // host memory said to be on the device
  lying.device = {kDLCUDA, 0};
  lying.ndim = 1;
  lying.dtype = kF32;
  lying.shape = &shape;
  EXPECT_EQ(dt_allreduce(comm_, &lying, &lying, DT_SUM, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("send: the tensor says kDLCUDA but its data is not CUDA device memory"), std::string::npos)
      << last();
  lying.device = {kDLCUDA, device_count()};
  EXPECT_EQ(dt_allreduce(comm_, &lying, &lying, DT_SUM, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("does not exist"), std::string::npos) << last();
  if (device_count() > 1) {
    DeviceTensor<float> elsewhere(iota_f(8), kF32, 1);
    EXPECT_EQ(dt_allreduce(comm_, &elsewhere, &elsewhere, DT_SUM, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last().find("send is on CUDA device 1 but this communicator uses device 0"), std::string::npos)
        << last();
  }
  EXPECT_EQ(dt_barrier(comm_), DT_OK) << "refusals leave the communicator usable";
}

TEST(WorldOfOneDeadlines, TimeoutBreaksAndAbortIsPrompt) {
  DT_REQUIRE_GPUS(1);
  dt_comm* comm = nullptr;
  ASSERT_EQ(dt_comm_create(&comm, nullptr), DT_OK) << last();
  DeviceTensor<float> buf(iota_f(64), kF32);
  // The first CUDA operation sets up the device path (NCCL's communicator);
  // the deadline below is then about the operation alone.
  ASSERT_EQ(dt_allreduce(comm, &buf, &buf, DT_SUM, nullptr, nullptr), DT_OK) << last();
  dt_request* req = nullptr;
  ASSERT_EQ(dt_recv(comm, &buf, 0, 1, nullptr, &req), DT_OK) << last();  // nobody sends
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(dt_request_wait(req, 300), DT_ERR_TIMEOUT) << last();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(last().find("did not complete within 300 ms"), std::string::npos) << last();
  dt_request_free(req);
  EXPECT_EQ(dt_allreduce(comm, &buf, &buf, DT_SUM, nullptr, nullptr), DT_ERR_ABORTED);
  EXPECT_NE(last().find("broken"), std::string::npos) << last();
  EXPECT_EQ(dt_comm_destroy(comm), DT_OK);

  ASSERT_EQ(dt_comm_create(&comm, nullptr), DT_OK) << last();
  ASSERT_EQ(dt_allreduce(comm, &buf, &buf, DT_SUM, nullptr, nullptr), DT_OK) << last();
  ASSERT_EQ(dt_recv(comm, &buf, 0, 1, nullptr, &req), DT_OK) << last();
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(dt_comm_abort(comm), DT_OK);
  });
  const auto waited = std::chrono::steady_clock::now();
  EXPECT_EQ(dt_request_wait(req, 30000), DT_ERR_ABORTED) << last();
  EXPECT_LT(std::chrono::steady_clock::now() - waited, std::chrono::seconds(10));
  aborter.join();
  dt_request_free(req);
  EXPECT_EQ(dt_comm_destroy(comm), DT_OK);
}

// dt_optimizer over CUDA tensors takes the steps the same optimizer takes on
// host copies of them (the fused kernels against the CPU loops, through the
// C API), zeroes the gradients on the device, and refuses host and device
// tensors mixed in one optimizer.
TEST(OptimizerOnDevice, StepsAsOnTheHost) {
  DT_REQUIRE_GPUS(1);
  const std::size_t sizes[] = {37, 1000, 1};
  std::vector<std::vector<float>> host_params, host_grads;
  std::vector<std::unique_ptr<DeviceTensor<float>>> device_params, device_grads;
  std::vector<std::int64_t> shapes(std::begin(sizes), std::end(sizes));
  std::vector<DLTensor> hp, hg, dp, dg;
  for (std::size_t i = 0; i < 3; ++i) {
    host_params.push_back(iota_f(sizes[i], -0.5f * static_cast<float>(sizes[i])));
    for (float& x : host_params.back()) x = x / 64.0f + 0.25f;
    host_grads.emplace_back(sizes[i], 0.0f);
    device_params.push_back(std::make_unique<DeviceTensor<float>>(host_params[i], kF32));
    device_grads.push_back(std::make_unique<DeviceTensor<float>>(host_grads[i], kF32));
  }
  for (std::size_t i = 0; i < 3; ++i) {
    DLTensor t{};
    t.device = {kDLCPU, 0};
    t.ndim = 1;
    t.dtype = kF32;
    t.shape = &shapes[i];
    t.data = host_params[i].data();
    hp.push_back(t);
    t.data = host_grads[i].data();
    hg.push_back(t);
    dp.push_back(device_params[i]->tensor);
    dg.push_back(device_grads[i]->tensor);
  }
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.weight_decay = 0.1f;
  opts.max_grad_norm = 0.5f;
  opts.loss_scale = 8.0f;
  dt_optimizer *on_host = nullptr, *on_device = nullptr;
  ASSERT_EQ(dt_optimizer_create(&on_host, hp.data(), hg.data(), 3, &opts), DT_OK) << last();
  ASSERT_EQ(dt_optimizer_create(&on_device, dp.data(), dg.data(), 3, &opts), DT_OK) << last();
  for (int step = 1; step <= 3; ++step) {
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < sizes[i]; ++j) {
        host_grads[i][j] = static_cast<float>((j * 7 + i * 3 + static_cast<std::size_t>(step)) % 11) - 5.0f;
      }
      cuda_ok(cudaMemcpy(device_grads[i]->data, host_grads[i].data(), sizes[i] * sizeof(float), cudaMemcpyHostToDevice),
              "cudaMemcpy");
    }
    dt_optimizer_step_info a = DT_OPTIMIZER_STEP_INFO_INIT, b = DT_OPTIMIZER_STEP_INFO_INIT;
    ASSERT_EQ(dt_optimizer_step(on_host, &a), DT_OK) << last();
    ASSERT_EQ(dt_optimizer_step(on_device, &b), DT_OK) << last();
    EXPECT_NEAR(b.grad_norm, a.grad_norm, 1e-12 * a.grad_norm);
    EXPECT_EQ(b.step, a.step);
    for (std::size_t i = 0; i < 3; ++i) {
      const std::vector<float> p = device_params[i]->read(), g = device_grads[i]->read();
      for (std::size_t j = 0; j < sizes[i]; ++j) {
        ASSERT_NEAR(p[j], host_params[i][j], 1e-6 * std::fabs(host_params[i][j]) + 1e-12) << i << " " << j;
        ASSERT_EQ(g[j], host_grads[i][j]) << "the unscaled, clipped gradient written back";
      }
    }
  }
  ASSERT_EQ(dt_optimizer_zero_grad(on_device), DT_OK) << last();
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(device_grads[i]->read(), std::vector<float>(sizes[i], 0.0f));
  EXPECT_EQ(dt_optimizer_destroy(on_host), DT_OK);
  EXPECT_EQ(dt_optimizer_destroy(on_device), DT_OK);

  std::vector<DLTensor> mixed_params = dp, mixed_grads = dg;
  mixed_params[1] = hp[1];
  mixed_grads[1] = hg[1];
  dt_optimizer* refused = nullptr;
  EXPECT_EQ(dt_optimizer_create(&refused, mixed_params.data(), mixed_grads.data(), 3, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last().rfind("params[1]: in host memory, but params[0] is on CUDA device 0", 0), 0u) << last();
  EXPECT_EQ(refused, nullptr);
}

}  // namespace
}  // namespace dtrain::test
