// An MoE layer on CUDA tensors against the same layer on host tensors (which
// layer_test.cpp checks against the single-process reference): routing, the
// plan, dispatch, the built-in experts, combine, every backward pass and the
// auxiliary losses, through the C API, one process per rank with the world
// as the ep communicator. Indices and counts must be equal, rows exactly
// equal where they are only moved, sums and products within float rounding.
// Also: a plan keeps the place of its first exchange.
//
// Built only with CUDA; every test skips, saying why, without a device.
// CTest runs it alone and under dtrun with two ranks (label gpu).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "moe/moe_reference.hpp"

namespace {

using dtrain::testing::moe::Numbers;
using dtrain::testing::moe::RouterSpec;

constexpr std::int64_t kHidden = 24;
constexpr std::int64_t kInner = 40;
constexpr double kTolerance = 1e-5;

// A CUDA runtime call that must succeed: the test cannot go on with a bad
// pointer, so a failure ends the program, saying why.
void cuda_or_die(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::abort();
  }
}

int test_device() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return -1;
  const char* local = std::getenv("DTRAIN_LOCAL_RANK");
  return (local != nullptr ? std::atoi(local) : 0) % devices;
}

// A tensor of `shape` holding `values`, in host memory or on the test's
// device; read() gives its values back as they are now.
template <typename T>
class Placed {
 public:
  Placed(bool on_device, std::vector<std::int64_t> shape, const std::vector<T>& values)
      : shape_(std::move(shape)), count_(values.size()), host_(values) {
    tensor_.ndim = static_cast<int>(shape_.size());
    tensor_.shape = shape_.data();
    tensor_.dtype = std::is_same_v<T, float> ? DLDataType{kDLFloat, 32, 1} : DLDataType{kDLInt, 64, 1};
    tensor_.data = host_.data();
    tensor_.device = {kDLCPU, 0};
    if (on_device) {
      const int device = test_device();
      cuda_or_die(cudaSetDevice(device), "cudaSetDevice");
      cuda_or_die(cudaMalloc(&tensor_.data, bytes() + 1), "cudaMalloc");
      cuda_or_die(cudaMemcpy(tensor_.data, values.data(), bytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
      tensor_.device = {kDLCUDA, device};
    }
  }
  Placed(bool on_device, std::vector<std::int64_t> shape, T fill)
      : Placed(on_device, shape, std::vector<T>(elements(shape), fill)) {}
  ~Placed() {
    if (tensor_.device.device_type == kDLCUDA) cudaFree(tensor_.data);
  }
  Placed(const Placed&) = delete;
  Placed& operator=(const Placed&) = delete;

  DLTensor* operator&() { return &tensor_; }
  std::vector<T> read() {
    if (tensor_.device.device_type != kDLCUDA) return host_;
    std::vector<T> values(count_);
    cuda_or_die(cudaMemcpy(values.data(), tensor_.data, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return values;
  }

 private:
  static std::size_t elements(const std::vector<std::int64_t>& shape) {
    std::size_t n = 1;
    for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
    return n;
  }
  std::size_t bytes() const { return count_ * sizeof(T); }

  std::vector<std::int64_t> shape_;
  std::size_t count_;
  std::vector<T> host_;
  DLTensor tensor_{};
};

std::vector<float> floats(Numbers& numbers, std::size_t n, double scale = 1.0) {
  const std::vector<double> v = numbers.take(n, scale);
  return std::vector<float>(v.begin(), v.end());
}

// Everything one rank's layer produces, copied to the host.
struct Results {
  std::vector<float> weights;
  std::vector<std::int64_t> experts;
  std::int64_t dropped = 0;
  std::vector<std::int64_t> counts;
  std::vector<float> received, hidden, expert_out, y, d_weights, d_expert_out, d_received, dw1, dw2, dx, d_logits,
      d_logits_losses;
  std::vector<std::int64_t> balance_counts;
  double balance = 0, z = 0;
};

// The layer on this rank's data (uneven tokens; rank 1 has none), with its
// tensors on the device or in host memory.
Results run_layer(dt_comm* ep, int rank, const RouterSpec& spec, std::uint64_t seed, bool on_device) {
  static const std::int64_t kTokens[] = {37, 0, 23, 11};
  const std::int64_t t = kTokens[rank % 4];
  int size = 1;
  EXPECT_EQ(dt_comm_size(ep, &size), DT_OK);
  const int local = spec.experts / size;
  Numbers numbers(seed * 100 + static_cast<std::uint64_t>(rank));
  const dt_moe_options opts = spec.options();
  Results r;

  Placed<float> logits(on_device, {t, spec.experts}, floats(numbers, static_cast<std::size_t>(t * spec.experts), 2.0));
  Placed<float> weights(on_device, {t, spec.k}, 0.0f);
  Placed<std::int64_t> experts(on_device, {t, spec.k}, std::int64_t{0});
  EXPECT_EQ(dt_moe_route(&logits, &opts, &weights, &experts, &r.dropped), DT_OK) << dt_error_last();
  r.weights = weights.read();
  r.experts = experts.read();

  dt_moe_plan* plan = nullptr;
  EXPECT_EQ(dt_moe_plan_create(&plan, ep, &experts, kHidden, &opts), DT_OK) << dt_error_last();
  if (plan == nullptr) return r;
  std::int64_t rows = 0;
  EXPECT_EQ(dt_moe_plan_received(plan, &rows), DT_OK);
  r.counts.assign(static_cast<std::size_t>(local), 0);
  EXPECT_EQ(dt_moe_plan_expert_counts(plan, r.counts.data(), local), DT_OK);

  Placed<float> x(on_device, {t, kHidden}, floats(numbers, static_cast<std::size_t>(t * kHidden)));
  Placed<float> received(on_device, {rows, kHidden}, -1.0f);
  EXPECT_EQ(dt_moe_dispatch(plan, &x, &received), DT_OK) << dt_error_last();
  r.received = received.read();

  // The built-in experts; counts stay in host memory, as the plan gives them.
  Placed<std::int64_t> counts(false, {local}, r.counts);
  Placed<float> w1(on_device, {local, kHidden, kInner}, floats(numbers, static_cast<std::size_t>(local * kHidden * kInner), 0.3));
  Placed<float> w2(on_device, {local, kInner, kHidden}, floats(numbers, static_cast<std::size_t>(local * kInner * kHidden), 0.3));
  Placed<float> hidden(on_device, {rows, kInner}, 0.0f);
  Placed<float> expert_out(on_device, {rows, kHidden}, 0.0f);
  EXPECT_EQ(dt_moe_experts_forward(&received, &counts, &w1, &w2, DT_MOE_SILU, &hidden, &expert_out), DT_OK)
      << dt_error_last();
  r.hidden = hidden.read();
  r.expert_out = expert_out.read();

  Placed<float> y(on_device, {t, kHidden}, 99.0f);
  EXPECT_EQ(dt_moe_combine(plan, &expert_out, &weights, &y), DT_OK) << dt_error_last();
  r.y = y.read();

  Placed<float> dy(on_device, {t, kHidden}, floats(numbers, static_cast<std::size_t>(t * kHidden)));
  Placed<float> d_expert_out(on_device, {rows, kHidden}, 99.0f);
  Placed<float> d_weights(on_device, {t, spec.k}, 99.0f);
  EXPECT_EQ(dt_moe_combine_backward(plan, &dy, &weights, &d_expert_out, &d_weights), DT_OK) << dt_error_last();
  r.d_expert_out = d_expert_out.read();
  r.d_weights = d_weights.read();

  Placed<float> d_received(on_device, {rows, kHidden}, 99.0f);
  Placed<float> dw1(on_device, {local, kHidden, kInner}, 99.0f);
  Placed<float> dw2(on_device, {local, kInner, kHidden}, 99.0f);
  EXPECT_EQ(dt_moe_experts_backward(&received, &counts, &w1, &w2, DT_MOE_SILU, &hidden, &d_expert_out, &d_received,
                                    &dw1, &dw2),
            DT_OK)
      << dt_error_last();
  r.d_received = d_received.read();
  r.dw1 = dw1.read();
  r.dw2 = dw2.read();

  Placed<float> dx(on_device, {t, kHidden}, 99.0f);
  EXPECT_EQ(dt_moe_dispatch_backward(plan, &d_received, &dx), DT_OK) << dt_error_last();
  r.dx = dx.read();

  Placed<float> d_logits(on_device, {t, spec.experts}, 99.0f);
  EXPECT_EQ(dt_moe_route_backward(&logits, &d_weights, &opts, &d_logits), DT_OK) << dt_error_last();
  r.d_logits = d_logits.read();
  Placed<std::int64_t> balance_counts(on_device, {spec.experts}, std::int64_t{-1});
  EXPECT_EQ(dt_moe_balance_loss(&logits, &opts, 0.01, &r.balance, &balance_counts, &d_logits), DT_OK)
      << dt_error_last();
  EXPECT_EQ(dt_moe_z_loss(&logits, 0.001, &r.z, &d_logits), DT_OK) << dt_error_last();
  r.balance_counts = balance_counts.read();
  r.d_logits_losses = d_logits.read();
  EXPECT_EQ(dt_moe_plan_destroy(plan), DT_OK);
  return r;
}

void expect_close(const std::vector<float>& device, const std::vector<float>& host, const char* what) {
  ASSERT_EQ(device.size(), host.size()) << what;
  float scale = 1e-30f;
  for (float v : host) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < host.size(); ++i) {
    EXPECT_NEAR(device[i], host[i], kTolerance * scale) << what << "[" << i << "]";
  }
}

class MoeOnDevice : public dtrain::testing::WorldFixture {
 protected:
  void SetUp() override {
    if (test_device() < 0) GTEST_SKIP() << "needs a CUDA device; this machine has none";
    WorldFixture::SetUp();
  }
};

// Sets DTRAIN_MOE_EXCHANGE_BYTES while it lives.
struct ExchangeBytes {
  explicit ExchangeBytes(const char* bytes) { setenv("DTRAIN_MOE_EXCHANGE_BYTES", bytes, 1); }
  ~ExchangeBytes() { unsetenv("DTRAIN_MOE_EXCHANGE_BYTES"); }
};

TEST_F(MoeOnDevice, LayerEqualsTheLayerOnTheHost) {
  std::uint64_t seed = 1;
  for (const char* bytes : {"0", "2147483647"}) {  // by local expert, and in one exchange
    const ExchangeBytes exchange(bytes);
    for (const RouterSpec& spec : {RouterSpec{4, 1, DT_MOE_SOFTMAX, false, 0.0, DT_MOE_DROP_BY_POSITION},
                                   RouterSpec{8, 2, DT_MOE_SOFTMAX, true, 0.75, DT_MOE_DROP_BY_SCORE},
                                   RouterSpec{8, 2, DT_MOE_SIGMOID, true, 1.0, DT_MOE_DROP_BY_POSITION}}) {
      SCOPED_TRACE("E=" + std::to_string(spec.experts) + " k=" + std::to_string(spec.k) + " exchange bytes " + bytes);
      const Results host = run_layer(comm_, rank_, spec, seed, false);
      const Results device = run_layer(comm_, rank_, spec, seed, true);
      ++seed;
      EXPECT_EQ(device.experts, host.experts);
      EXPECT_EQ(device.dropped, host.dropped);
      EXPECT_EQ(device.counts, host.counts);
      EXPECT_EQ(device.received, host.received);  // moved, not computed
      EXPECT_EQ(device.balance_counts, host.balance_counts);
      EXPECT_NEAR(device.balance, host.balance, 1e-12);
      EXPECT_NEAR(device.z, host.z, 1e-12);
      expect_close(device.weights, host.weights, "weights");
      expect_close(device.hidden, host.hidden, "hidden");
      expect_close(device.expert_out, host.expert_out, "expert_out");
      expect_close(device.y, host.y, "y");
      expect_close(device.d_weights, host.d_weights, "d_weights");
      expect_close(device.d_expert_out, host.d_expert_out, "d_expert_out");
      expect_close(device.d_received, host.d_received, "d_received");
      expect_close(device.dw1, host.dw1, "dw1");
      expect_close(device.dw2, host.dw2, "dw2");
      expect_close(device.dx, host.dx, "dx");
      expect_close(device.d_logits, host.d_logits, "d_logits");
      expect_close(device.d_logits_losses, host.d_logits_losses, "d_logits with the losses");
    }
  }
}

// A plan placed on the device by its first exchange refuses host tensors
// afterwards, on every rank: the calling rank's own error where it is the
// one that moved, DT_ERR_MISMATCH where its peers did.
TEST_F(MoeOnDevice, PlanKeepsThePlaceOfItsFirstExchange) {
  const RouterSpec spec{4, 1, DT_MOE_SOFTMAX, false, 0.0, DT_MOE_DROP_BY_POSITION};
  const dt_moe_options opts = spec.options();
  const std::int64_t t = 6;
  std::vector<std::int64_t> choice(static_cast<std::size_t>(t));
  for (std::int64_t i = 0; i < t; ++i) choice[static_cast<std::size_t>(i)] = i % spec.experts;
  Placed<std::int64_t> experts(false, {t, 1}, choice);
  dt_moe_plan* created = nullptr;
  ASSERT_EQ(dt_moe_plan_create(&created, comm_, &experts, kHidden, &opts), DT_OK) << dt_error_last();
  const std::unique_ptr<dt_moe_plan, dt_status (*)(dt_moe_plan*)> owned(created, dt_moe_plan_destroy);
  dt_moe_plan* plan = owned.get();
  std::int64_t rows = 0;
  ASSERT_EQ(dt_moe_plan_received(plan, &rows), DT_OK);
  Placed<float> x(true, {t, kHidden}, 1.0f);
  Placed<float> received(true, {rows, kHidden}, 0.0f);
  ASSERT_EQ(dt_moe_dispatch(plan, &x, &received), DT_OK) << dt_error_last();
  EXPECT_EQ(received.read(), std::vector<float>(static_cast<std::size_t>(rows * kHidden), 1.0f));

  Placed<float> host_x(false, {t, kHidden}, 1.0f);
  Placed<float> host_received(false, {rows, kHidden}, 0.0f);
  const bool moved = rank_ == 0;
  const dt_status status =
      moved ? dt_moe_dispatch(plan, &host_x, &host_received) : dt_moe_dispatch(plan, &x, &received);
  if (moved) {
    EXPECT_EQ(status, DT_ERR_INVALID_ARGUMENT) << dt_error_last();
    EXPECT_NE(std::string(dt_error_last()).find("first call"), std::string::npos) << dt_error_last();
  } else {
    EXPECT_EQ(status, DT_ERR_MISMATCH) << dt_error_last();
  }
}

}  // namespace
