// The Optimizer on CUDA tensors (the fused multi-tensor kernels) against the
// same Optimizer on host tensors (the CPU kernels) and the float64 reference:
// every optimizer variant and dtype, many tensors of odd sizes (0, 1, sizes
// that are not a multiple of the vector width, more than one chunk), some of
// them not 16-byte aligned, poisoned guard bytes between them that must stay
// as they were, loss scaling with write-back, clipping, and the skip on inf or
// NaN. Skipped, with a message, without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/cpu/half.hpp"
#include "device/cuda/optim_kernels.hpp"
#include "gpu.hpp"
#include "optim/config.hpp"
#include "optim/optimizer.hpp"
#include "optim/reference.hpp"
#include "optim/tensors.hpp"

namespace dtrain::test {
namespace {

namespace cuda = device::cuda;
using optim::Optimizer;
using testing::Precision;
using testing::Sequence;

constexpr unsigned char kPoison = 0xA5;
constexpr std::size_t kGuard = 64;           // poisoned bytes between tensors
constexpr double kRelative = 1e-6;           // CUDA against CPU, f32
constexpr double kReferenceRelative = 1e-5;  // f32 CUDA against the float64 reference, after a few steps

// 0, 1, tails of every length, one chunk exactly, one element past it,
// several chunks and a tail.
const std::vector<std::int64_t> kCounts = {0,
                                           1,
                                           3,
                                           4,
                                           5,
                                           17,
                                           1000,
                                           1023,
                                           cuda::optim::kChunkElements,
                                           cuda::optim::kChunkElements + 1,
                                           3 * cuda::optim::kChunkElements + 5,
                                           (1 << 20) + 3};

std::size_t element_size(Precision p) { return p == Precision::f32 ? 4 : 2; }

std::string name_of(Precision p) {
  return p == Precision::f32 ? "float32" : p == Precision::f16 ? "float16" : "bfloat16";
}

float load(Precision p, const unsigned char* at) {
  if (p == Precision::f32) {
    float v;
    std::memcpy(&v, at, 4);
    return v;
  }
  std::uint16_t h;
  std::memcpy(&h, at, 2);
  return p == Precision::f16 ? device::cpu::half_to_float(h) : device::cpu::bf16_to_float(h);
}

void store(Precision p, unsigned char* at, float x) {
  if (p == Precision::f32) {
    std::memcpy(at, &x, 4);
    return;
  }
  const std::uint16_t h = p == Precision::f16 ? device::cpu::float_to_half(x) : device::cpu::float_to_bf16(x);
  std::memcpy(at, &h, 2);
}

// Tensors of kCounts elements side by side in one block of memory, with
// kGuard poisoned bytes before and after each; every odd tensor starts one
// element past a 16-byte boundary, so that its chunks take the scalar path.
// The same bytes live on the host and, as a copy, on the device.
class Arena {
 public:
  explicit Arena(Precision precision) : precision_(precision) {
    const std::size_t size = element_size(precision);
    std::size_t at = kGuard;
    for (std::size_t i = 0; i < kCounts.size(); ++i) {
      at = (at + 255) / 256 * 256 + (i % 2 ? size : 0);
      offsets_.push_back(at);
      at += static_cast<std::size_t>(kCounts[i]) * size + kGuard;
    }
    host_.assign(at, kPoison);
    shapes_.resize(kCounts.size());
    for (std::size_t i = 0; i < kCounts.size(); ++i) shapes_[i] = {kCounts[i]};
  }

  std::size_t size() const { return kCounts.size(); }
  Precision precision() const { return precision_; }
  float get(std::size_t i, std::int64_t j) const {
    return load(precision_, host_.data() + offsets_[i] + static_cast<std::size_t>(j) * element_size(precision_));
  }
  void set(std::size_t i, std::int64_t j, float x) {
    store(precision_, host_.data() + offsets_[i] + static_cast<std::size_t>(j) * element_size(precision_), x);
  }

  void upload() {
    if (device_.size() != host_.size()) device_ = cuda::DeviceBuffer(0, host_.size());
    cuda::check(cudaMemcpy(device_.data(), host_.data(), host_.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  // The device's bytes, as an Arena of their own.
  Arena downloaded() const {
    Arena copy(precision_);
    copy.host_ = to_host<unsigned char>(device_.data(), host_.size());
    return copy;
  }

  // DLTensors over the host bytes or over the device copy.
  std::vector<DLTensor> tensors(bool on_device) {
    std::vector<DLTensor> out;
    for (std::size_t i = 0; i < size(); ++i) {
      DLTensor t{};
      t.data = (on_device ? static_cast<unsigned char*>(device_.data()) : host_.data()) + offsets_[i];
      t.device = on_device ? DLDevice{kDLCUDA, 0} : DLDevice{kDLCPU, 0};
      t.ndim = 1;
      t.dtype = testing::dlpack_dtype(precision_);
      t.shape = shapes_[i].data();
      out.push_back(t);
    }
    return out;
  }

  // The bytes outside every tensor, which nothing may write.
  std::vector<unsigned char> guards() const {
    std::vector<unsigned char> out;
    std::size_t from = 0;
    for (std::size_t i = 0; i < size(); ++i) {
      out.insert(out.end(), host_.begin() + static_cast<std::ptrdiff_t>(from),
                 host_.begin() + static_cast<std::ptrdiff_t>(offsets_[i]));
      from = offsets_[i] + static_cast<std::size_t>(kCounts[i]) * element_size(precision_);
    }
    out.insert(out.end(), host_.begin() + static_cast<std::ptrdiff_t>(from), host_.end());
    return out;
  }

 private:
  Precision precision_;
  std::vector<std::size_t> offsets_;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<unsigned char> host_;
  cuda::DeviceBuffer device_;
};

void fill_params(Arena& params, std::uint64_t seed) {
  Sequence seq(seed);
  for (std::size_t i = 0; i < params.size(); ++i) {
    for (std::int64_t j = 0; j < kCounts[i]; ++j) {
      const float magnitude = seq.next(0.5f, 2.0f);
      params.set(i, j, seq.next(0.0f, 1.0f) < 0.5f ? -magnitude : magnitude);
    }
  }
}

// Gradients in [-scale, scale).
void fill_grads(Arena& grads, std::uint64_t seed, float scale) {
  Sequence seq(seed);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    for (std::int64_t j = 0; j < kCounts[i]; ++j) grads.set(i, j, seq.next(-scale, scale));
  }
}

// Relative, with a floor far below every value the tests make, for
// momentum buffers that cancel to nearly zero.
bool close(double actual, double expected, double relative) {
  if (std::isnan(expected)) return std::isnan(actual);
  return std::fabs(actual - expected) <= relative * std::fabs(expected) + 1e-12;
}

std::vector<float> device_floats(const float* data, std::int64_t count) {
  return data ? to_host<float>(data, static_cast<std::size_t>(count)) : std::vector<float>{};
}

struct Variant {
  std::string name;
  dt_optimizer_options opts;
};

std::vector<Variant> variants() {
  std::vector<Variant> out;
  auto sgd = [](float momentum, float dampening, int nesterov, float weight_decay) {
    dt_optimizer_options o = DT_OPTIMIZER_OPTIONS_INIT;
    o.kind = DT_OPTIM_SGD;
    o.lr = 0.05f;
    o.momentum = momentum;
    o.dampening = dampening;
    o.nesterov = nesterov;
    o.weight_decay = weight_decay;
    return o;
  };
  out.push_back({"sgd", sgd(0.0f, 0.0f, 0, 0.0f)});
  out.push_back({"sgd_weight_decay", sgd(0.0f, 0.0f, 0, 0.01f)});
  out.push_back({"sgd_momentum_dampening", sgd(0.9f, 0.1f, 0, 0.01f)});
  out.push_back({"sgd_nesterov", sgd(0.9f, 0.0f, 1, 0.01f)});
  dt_optimizer_options adamw = DT_OPTIMIZER_OPTIONS_INIT;
  adamw.lr = 0.01f;
  out.push_back({"adamw", adamw});
  adamw.weight_decay = 0.1f;
  out.push_back({"adamw_weight_decay", adamw});
  return out;
}

// Steps a CPU and a CUDA optimizer over equal tensors and checks after each
// step that they hold the same values, that the guards are untouched, and,
// for f32, that both follow the float64 reference.
void compare(const Variant& variant, Precision precision, float loss_scale, float max_grad_norm) {
  SCOPED_TRACE(variant.name + " " + name_of(precision) + " loss_scale " + std::to_string(loss_scale) +
               " max_grad_norm " + std::to_string(max_grad_norm));
  dt_optimizer_options opts = variant.opts;
  opts.loss_scale = loss_scale;
  opts.max_grad_norm = max_grad_norm;
  const optim::Config config = optim::read_config(&opts);

  Arena params(precision), grads(precision);
  fill_params(params, 7);
  params.upload();
  grads.upload();
  const std::vector<unsigned char> guards = params.guards();
  std::vector<DLTensor> host_params = params.tensors(false), host_grads = grads.tensors(false);
  std::vector<DLTensor> device_params = params.tensors(true), device_grads = grads.tensors(true);
  Optimizer cpu(config, testing::checked(host_params.data(), host_grads.data(), params.size()));
  Optimizer gpu(config, testing::checked(device_params.data(), device_grads.data(), params.size()));

  std::vector<std::vector<double>> initial(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    for (std::int64_t j = 0; j < kCounts[i]; ++j) initial[i].push_back(params.get(i, j));
  }
  testing::Reference reference(opts, initial);

  for (int step = 1; step <= 3; ++step) {
    fill_grads(grads, 100 + step, loss_scale);
    grads.upload();
    testing::Values arriving(grads.size());
    for (std::size_t i = 0; i < grads.size(); ++i) {
      for (std::int64_t j = 0; j < kCounts[i]; ++j) arriving[i].push_back(grads.get(i, j));
    }
    const optim::StepResult a = cpu.step();
    const optim::StepResult b = gpu.step();
    EXPECT_NEAR(b.grad_norm, reference.step(arriving, loss_scale).norm, 1e-9 * b.grad_norm);
    ASSERT_FALSE(a.skipped);
    ASSERT_FALSE(b.skipped);
    EXPECT_NEAR(b.grad_norm, a.grad_norm, 1e-10 * a.grad_norm);  // f64 sums in another order
    EXPECT_EQ(b.steps, a.steps);
    EXPECT_EQ(b.loss_scale, a.loss_scale);

    const Arena got_params = params.downloaded(), got_grads = grads.downloaded();
    EXPECT_EQ(got_params.guards(), guards);
    EXPECT_EQ(got_grads.guards(), guards);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const device::Slot& host = cpu.slots()[i];
      const device::Slot& dev = gpu.slots()[i];
      const std::vector<float> master = device_floats(dev.master, kCounts[i]);
      const std::vector<float> state0 = device_floats(dev.state[0], kCounts[i]);
      const std::vector<float> state1 = device_floats(dev.state[1], kCounts[i]);
      int bad = 0;
      for (std::int64_t j = 0; j < kCounts[i] && bad < 5; ++j) {
        const auto at = static_cast<std::size_t>(j);
        const float p = got_params.get(i, j);
        bool ok = true;
        if (precision == Precision::f32) {
          ok = ok && close(p, params.get(i, j), kRelative);
          ok = ok && close(p, reference.params()[i][at], kReferenceRelative);
        } else {
          // The param is its master rounded, and the master is the CPU's.
          ok = ok && p == testing::round_to(precision, master[at]);
          ok = ok && close(master[at], host.master[at], kRelative);
        }
        // The applied gradient is one product, the same on both sides.
        ok = ok && got_grads.get(i, j) == grads.get(i, j);
        if (!state0.empty()) ok = ok && close(state0[at], host.state[0][at], kRelative);
        if (!state1.empty()) ok = ok && close(state1[at], host.state[1][at], kRelative);
        if (!ok) {
          ++bad;
          ADD_FAILURE() << "step " << step << ", tensor " << i << " (" << kCounts[i] << " elements), element " << j
                        << ": param " << p << " vs CPU " << params.get(i, j) << " and reference "
                        << reference.params()[i][at] << "; grad " << got_grads.get(i, j) << " vs " << grads.get(i, j);
        }
      }
    }
  }
}

TEST(OptimizerGpu, MatchesTheCpuKernelsForEveryVariantAndDtype) {
  DT_REQUIRE_GPUS(1);
  for (const Variant& variant : variants()) {
    for (Precision precision : {Precision::f32, Precision::f16, Precision::bf16}) {
      compare(variant, precision, 1.0f, 0.0f);
    }
  }
}

// A loss scale (so that the grads are written back, unscaled) and clipping
// that binds.
TEST(OptimizerGpu, LossScaleAndClipping) {
  DT_REQUIRE_GPUS(1);
  for (const Variant& variant : variants()) {
    for (Precision precision : {Precision::f32, Precision::bf16, Precision::f16}) {
      compare(variant, precision, 1024.0f, 0.0f);
      compare(variant, precision, 1.0f, 1.0f);
    }
  }
}

// A NaN or an infinity anywhere skips the step: nothing the caller owns nor
// any state changes, and the dynamic loss scale backs off, as on the CPU.
TEST(OptimizerGpu, InfOrNanSkipsTheStep) {
  DT_REQUIRE_GPUS(1);
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    for (Precision precision : {Precision::f32, Precision::f16, Precision::bf16}) {
      dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
      opts.loss_scale = 256.0f;
      opts.dynamic_loss_scale = 1;
      const optim::Config config = optim::read_config(&opts);
      Arena params(precision), grads(precision);
      fill_params(params, 3);
      fill_grads(grads, 4, 1.0f);
      grads.set(kCounts.size() - 1, kCounts.back() - 1, bad);
      params.upload();
      grads.upload();
      std::vector<DLTensor> p = params.tensors(true), g = grads.tensors(true);
      Optimizer gpu(config, testing::checked(p.data(), g.data(), params.size()));
      const optim::StepResult result = gpu.step();
      EXPECT_TRUE(result.skipped);
      EXPECT_FALSE(std::isfinite(result.grad_norm));
      EXPECT_EQ(result.steps, 0);
      EXPECT_EQ(result.loss_scale, 128.0f);
      const Arena got_params = params.downloaded(), got_grads = grads.downloaded();
      for (std::size_t i = 0; i < params.size(); ++i) {
        const std::vector<float> m = device_floats(gpu.slots()[i].state[0], kCounts[i]);
        for (std::int64_t j = 0; j < kCounts[i]; ++j) {
          ASSERT_EQ(got_params.get(i, j), params.get(i, j));
          if (!(i == kCounts.size() - 1 && j == kCounts.back() - 1)) {
            ASSERT_EQ(got_grads.get(i, j), grads.get(i, j));
          }
          ASSERT_EQ(m[static_cast<std::size_t>(j)], 0.0f);
        }
      }
    }
  }
}

// The norm is reduced in a fixed order: the same gradients give the same
// bits on every step, and agree with the CPU's f64 sum.
TEST(OptimizerGpu, NormIsDeterministic) {
  DT_REQUIRE_GPUS(1);
  dt_optimizer_options opts = DT_OPTIMIZER_OPTIONS_INIT;
  opts.lr = 0.0f;
  const optim::Config config = optim::read_config(&opts);
  Arena params(Precision::f32), grads(Precision::f32);
  fill_params(params, 5);
  fill_grads(grads, 6, 3.0f);
  params.upload();
  grads.upload();
  std::vector<DLTensor> hp = params.tensors(false), hg = grads.tensors(false);
  std::vector<DLTensor> dp = params.tensors(true), dg = grads.tensors(true);
  Optimizer cpu(config, testing::checked(hp.data(), hg.data(), params.size()));
  Optimizer gpu(config, testing::checked(dp.data(), dg.data(), params.size()));
  const double first = gpu.step().grad_norm;
  for (int k = 0; k < 5; ++k) EXPECT_EQ(gpu.step().grad_norm, first);
  const double expected = cpu.step().grad_norm;
  EXPECT_NEAR(first, expected, 1e-10 * expected);
}

TEST(OptimizerGpu, ZeroGradClearsEveryGradient) {
  DT_REQUIRE_GPUS(1);
  const optim::Config config = optim::read_config(nullptr);
  Arena params(Precision::bf16), grads(Precision::bf16);
  fill_params(params, 8);
  fill_grads(grads, 9, 1.0f);
  params.upload();
  grads.upload();
  const std::vector<unsigned char> guards = grads.guards();
  std::vector<DLTensor> p = params.tensors(true), g = grads.tensors(true);
  Optimizer gpu(config, testing::checked(p.data(), g.data(), params.size()));
  gpu.zero_grad();
  const Arena got = grads.downloaded();
  EXPECT_EQ(got.guards(), guards);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    for (std::int64_t j = 0; j < kCounts[i]; ++j) ASSERT_EQ(got.get(i, j), 0.0f);
  }
}

// Host and device tensors, or two devices, in one optimizer are refused,
// naming the tensor.
TEST(OptimizerGpu, MixedDevicesAreRefused) {
  DT_REQUIRE_GPUS(1);
  Arena params(Precision::f32), grads(Precision::f32);
  params.upload();
  grads.upload();
  std::vector<DLTensor> p = params.tensors(true), g = grads.tensors(true);
  const std::vector<DLTensor> host_p = params.tensors(false), host_g = grads.tensors(false);
  p[2] = host_p[2];
  g[2] = host_g[2];
  try {
    Optimizer gpu(optim::read_config(nullptr), testing::checked(p.data(), g.data(), params.size()));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("params[2]: in host memory, but params[0] is on CUDA device 0"),
              std::string::npos)
        << e.what();
  }
}

// Host memory labelled kDLCUDA is refused before a kernel could fault on it.
TEST(OptimizerGpu, HostMemoryLabelledCudaIsRefused) {
  DT_REQUIRE_GPUS(1);
  Arena params(Precision::f32), grads(Precision::f32);
  params.upload();
  grads.upload();
  std::vector<DLTensor> p = params.tensors(true), g = grads.tensors(true);
  std::vector<DLTensor> host_g = grads.tensors(false);
  g[1].data = host_g[1].data;
  try {
    Optimizer gpu(optim::read_config(nullptr), testing::checked(p.data(), g.data(), params.size()));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(
        std::string(e.what()).rfind("grads[1]: the tensor says kDLCUDA but its data is not CUDA device memory", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace dtrain::test
