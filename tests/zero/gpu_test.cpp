// ZeRO on CUDA parameters through the C API, one process per rank under
// dtrun (ranks sharing a GPU take the staged path). Each case trains the test
// MLP (tests/ddp/mlp.hpp) twice in the same ranks, through a dt_zero over
// host parameters and through one over the same parameters on the GPU, with
// the same batches, and requires the two to agree after every step: the
// parameters (f32 within 1e-5, bf16 within 1e-2 relative), the step
// results and the memory each reports. The host dt_zero is the reference:
// tests/zero/equivalence_test.cpp holds it equal to one process training on
// the whole batch.
//
// The trainer works on a non-blocking stream of its own, given in the
// options, and every gradient it writes waits there behind a host function
// that sleeps first: a reduction not ordered after the trainer's stream would
// read the buffer before the gradient lands, and the runs would differ.
//
// Also: checkpoints saved from the GPU load on the host and back; the
// tensors dt_zero_parameter() and dt_zero_gradient() describe are device
// memory on the communicator's device; parameters that mix host and device
// memory are refused. Exits 77 (skipped) without a CUDA device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "ddp/mlp.hpp"
#include "common/gpu_program.hpp"
#include "dtrain.h"

namespace {

using dtrain::test::Batch;
using dtrain::test::Mlp;

using dtrain::testing::check;
using dtrain::testing::from_bf16;
using dtrain::testing::to_bf16;

std::size_t element_size(bool bf16) { return bf16 ? 2 : 4; }

// The trainer's side of one dt_zero: where its tensors are and how the
// trainer reads and writes them.
class Trainer {
 public:
  Trainer(bool cuda, bool bf16) : cuda_(cuda), bf16_(bf16) {
    if (cuda_) check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~Trainer() {
    if (cuda_) {
      cudaStreamSynchronize(stream_);
      for (void* p : pinned_) cudaFreeHost(p);
      for (void* p : device_) cudaFree(p);
      cudaStreamDestroy(stream_);
    }
  }
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  bool cuda() const { return cuda_; }
  void* stream() const { return stream_; }

  // The model's parameters as tensors in this trainer's memory.
  std::vector<const DLTensor*> parameters(const Mlp& model) {
    shapes_ = Mlp::shapes();
    tensors_.assign(model.params.size(), DLTensor{});
    for (std::size_t t = 0; t < model.params.size(); ++t) {
      const std::vector<float>& values = model.params[t];
      std::vector<std::uint8_t> bytes = encode(values);
      void* data = nullptr;
      if (cuda_) {
        check(cudaMalloc(&data, bytes.size()), "cudaMalloc");
        check(cudaMemcpy(data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        device_.push_back(data);
      } else {
        host_.push_back(std::move(bytes));
        data = host_.back().data();
      }
      DLTensor& tensor = tensors_[t];
      tensor.data = data;
      int device = 0;
      check(cudaGetDevice(&device), "cudaGetDevice");
      tensor.device = cuda_ ? DLDevice{kDLCUDA, device} : DLDevice{kDLCPU, 0};
      tensor.ndim = static_cast<int>(shapes_[t].size());
      tensor.shape = shapes_[t].data();
      tensor.dtype = bf16_ ? DLDataType{kDLBfloat, 16, 1} : DLDataType{kDLFloat, 32, 1};
    }
    std::vector<const DLTensor*> pointers;
    for (const DLTensor& tensor : tensors_) pointers.push_back(&tensor);
    return pointers;
  }

  std::vector<float> read(const DLTensor& tensor) {
    const std::size_t n = count(tensor);
    std::vector<std::uint8_t> bytes(n * element_size(bf16_));
    if (cuda_) {
      void* staging = pinned(bytes.size());
      check(cudaMemcpyAsync(staging, tensor.data, bytes.size(), cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
      std::memcpy(bytes.data(), staging, bytes.size());
    } else {
      std::memcpy(bytes.data(), tensor.data, bytes.size());
    }
    return decode(bytes);
  }

  // tensor += values, the write queued behind a sleep on the trainer's stream.
  void add(const DLTensor& tensor, const std::vector<float>& values) {
    std::vector<float> sum = read(tensor);
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += values[k];
    const std::vector<std::uint8_t> bytes = encode(sum);
    if (!cuda_) {
      std::memcpy(tensor.data, bytes.data(), bytes.size());
      return;
    }
    void* staging = pinned(bytes.size());
    std::memcpy(staging, bytes.data(), bytes.size());
    check(cudaLaunchHostFunc(stream_, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(5)); },
                             nullptr),
          "cudaLaunchHostFunc");
    check(cudaMemcpyAsync(tensor.data, staging, bytes.size(), cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
  }

 private:
  static std::size_t count(const DLTensor& tensor) {
    std::size_t n = 1;
    for (int d = 0; d < tensor.ndim; ++d) n *= static_cast<std::size_t>(tensor.shape[d]);
    return n;
  }
  std::vector<std::uint8_t> encode(const std::vector<float>& values) const {
    std::vector<std::uint8_t> bytes(values.size() * element_size(bf16_));
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (bf16_) {
        const std::uint16_t h = to_bf16(values[k]);
        std::memcpy(bytes.data() + 2 * k, &h, 2);
      } else {
        std::memcpy(bytes.data() + 4 * k, &values[k], 4);
      }
    }
    return bytes;
  }
  std::vector<float> decode(const std::vector<std::uint8_t>& bytes) const {
    std::vector<float> values(bytes.size() / element_size(bf16_));
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (bf16_) {
        std::uint16_t h;
        std::memcpy(&h, bytes.data() + 2 * k, 2);
        values[k] = from_bf16(h);
      } else {
        std::memcpy(&values[k], bytes.data() + 4 * k, 4);
      }
    }
    return values;
  }
  // Pinned memory, kept until the trainer is gone: copies from it run
  // asynchronously, after the sleep queued before them.
  void* pinned(std::size_t bytes) {
    void* p = nullptr;
    check(cudaMallocHost(&p, std::max<std::size_t>(bytes, 1)), "cudaMallocHost");
    pinned_.push_back(p);
    return p;
  }

  const bool cuda_;
  const bool bf16_;
  cudaStream_t stream_ = nullptr;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<DLTensor> tensors_;
  std::vector<std::vector<std::uint8_t>> host_;
  std::vector<void*> device_;
  std::vector<void*> pinned_;
};

struct Case {
  const char* name;
  int stage;
  dt_optimizer_kind kind;
  bool bf16;
  int micro_steps;
  std::vector<std::size_t> unit_sizes;
};

// A dt_zero and the trainer that drives it.
struct Training {
  Trainer trainer;
  dt_zero* zero = nullptr;
  Training(bool cuda, bool bf16) : trainer(cuda, bf16) {}
  ~Training() { dt_zero_destroy(zero); }
};

class GpuZero : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(dt_comm_create(&comm_, nullptr), DT_OK) << dt_error_last();
    dt_comm_rank(comm_, &rank_);
    dt_comm_size(comm_, &size_);
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    const char* local = std::getenv("DTRAIN_LOCAL_RANK");
    check(cudaSetDevice((local ? std::atoi(local) : 0) % devices), "cudaSetDevice");
  }
  void TearDown() override { dt_comm_destroy(comm_); }

  std::unique_ptr<Training> create(const Case& c, bool cuda) {
    auto run = std::make_unique<Training>(cuda, c.bf16);
    const Mlp model(100 + static_cast<unsigned>(rank_));  // ranks differ; rank 0's values win
    const std::vector<const DLTensor*> params = run->trainer.parameters(model);
    dt_zero_options opts = DT_ZERO_OPTIONS_INIT;
    opts.stage = c.stage;
    opts.unit_sizes = c.unit_sizes.data();
    opts.unit_count = c.unit_sizes.size();
    opts.stream = run->trainer.stream();
    dt_optimizer_options optim = DT_OPTIMIZER_OPTIONS_INIT;
    optim.kind = c.kind;
    optim.lr = c.kind == DT_OPTIM_SGD ? 0.05f : 0.01f;
    if (c.kind == DT_OPTIM_SGD) optim.momentum = 0.9f;
    EXPECT_EQ(dt_zero_create(&run->zero, comm_, params.data(), params.size(), &optim, &opts), DT_OK)
        << dt_error_last();
    return run;
  }

  // Every parameter's values, gathered unit by unit.
  std::vector<std::vector<float>> read(Training& run, const Case& c) {
    std::vector<std::vector<float>> values;
    std::size_t first = 0;
    for (std::size_t u = 0; u < c.unit_sizes.size(); ++u) {
      EXPECT_EQ(dt_zero_gather_wait(run.zero, u, -1), DT_OK) << dt_error_last();
      for (std::size_t i = first; i < first + c.unit_sizes[u]; ++i) {
        DLTensor t{};
        EXPECT_EQ(dt_zero_parameter(run.zero, i, &t), DT_OK) << dt_error_last();
        values.push_back(run.trainer.read(t));
      }
      EXPECT_EQ(dt_zero_release(run.zero, u), DT_OK) << dt_error_last();
      first += c.unit_sizes[u];
    }
    return values;
  }

  // One micro-step on this rank's share of `batch`, as a stage 3 trainer
  // runs it (gather for forward, gather again for backward, add, mark,
  // release).
  void micro_step(Training& run, const Case& c, const Batch& batch) {
    Mlp model(0);
    model.params = read(run, c);
    std::vector<std::size_t> unit_of, first_of;
    for (std::size_t u = 0, first = 0; u < c.unit_sizes.size(); first += c.unit_sizes[u], ++u) {
      for (std::size_t k = 0; k < c.unit_sizes[u]; ++k) {
        unit_of.push_back(u);
        first_of.push_back(first);
      }
    }
    const std::size_t share = batch.size() / static_cast<std::size_t>(size_);
    model.zero_grad();
    model.accumulate(batch.slice(static_cast<std::size_t>(rank_) * share, share), 1.0f / static_cast<float>(share),
                     [&](std::size_t i) {
                       const std::size_t u = unit_of[i];
                       if (i + 1 == first_of[i] + c.unit_sizes[u]) {
                         EXPECT_EQ(dt_zero_gather(run.zero, u), DT_OK) << dt_error_last();
                         EXPECT_EQ(dt_zero_gather_wait(run.zero, u, -1), DT_OK) << dt_error_last();
                       }
                       DLTensor g{};
                       ASSERT_EQ(dt_zero_gradient(run.zero, i, &g), DT_OK) << dt_error_last();
                       run.trainer.add(g, model.grads[i]);
                       ASSERT_EQ(dt_zero_mark_ready(run.zero, i), DT_OK) << dt_error_last();
                       if (i == first_of[i]) {
                         EXPECT_EQ(dt_zero_release(run.zero, u), DT_OK) << dt_error_last();
                       }
                     });
    ASSERT_EQ(dt_zero_wait(run.zero, -1), DT_OK) << dt_error_last();
  }

  dt_optimizer_step_info step(Training& run) {
    dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
    EXPECT_EQ(dt_zero_step(run.zero, &info), DT_OK) << dt_error_last();
    return info;
  }

  dt_comm* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

double relative_error(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double diff = 0, scale = 0;
  for (std::size_t t = 0; t < a.size(); ++t) {
    for (std::size_t k = 0; k < a[t].size(); ++k) {
      diff = std::max(diff, std::fabs(static_cast<double>(a[t][k]) - b[t][k]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[t][k])));
    }
  }
  return diff / scale;
}

// The bytes of every unit's full buffer: unit u holds the next
// unit_sizes[u] parameters, padded to a multiple of the ranks.
std::int64_t full_unit_bytes(const Case& c, int ranks) {
  const std::vector<std::vector<std::int64_t>> shapes = Mlp::shapes();
  std::int64_t bytes = 0;
  std::size_t param = 0;
  for (std::size_t size : c.unit_sizes) {
    std::int64_t count = 0;
    for (std::size_t k = 0; k < size; ++k, ++param) {
      std::int64_t n = 1;
      for (std::int64_t extent : shapes[param]) n *= extent;
      count += n;
    }
    bytes += (count + ranks - 1) / ranks * ranks * static_cast<std::int64_t>(element_size(c.bf16));
  }
  return bytes;
}

// Both hold the same memory by purpose. The peaks may differ: a unit's
// gradient buffer (stages 2-3) is freed once its reduction is seen to have
// completed, which on the device can come later than on the host, so more
// of them may be alive at once; but never more than every unit's gradients
// and (stage 3) every unit's parameters.
void expect_same_memory(dt_zero* host, dt_zero* device, const Case& c, int ranks) {
  dt_zero_memory a = DT_ZERO_MEMORY_INIT, b = DT_ZERO_MEMORY_INIT;
  ASSERT_EQ(dt_zero_memory_usage(host, &a), DT_OK);
  ASSERT_EQ(dt_zero_memory_usage(device, &b), DT_OK);
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.gradients, b.gradients);
  EXPECT_EQ(a.optimizer_state, b.optimizer_state);
  EXPECT_EQ(a.master_weights, b.master_weights);
  EXPECT_EQ(a.communication, b.communication);
  EXPECT_EQ(a.padding, b.padding);
  const std::int64_t total = b.parameters + b.gradients + b.optimizer_state + b.master_weights + b.communication;
  EXPECT_GE(b.peak, total);
  EXPECT_LE(b.peak, total + full_unit_bytes(c, ranks) * (c.stage == 3 ? 2 : 1));
}

const Case kCases[] = {
    {"s0_sgd", 0, DT_OPTIM_SGD, false, 1, {2, 2}},
    {"s1_adamw_accumulate", 1, DT_OPTIM_ADAMW, false, 2, {2, 2}},
    {"s2_adamw", 2, DT_OPTIM_ADAMW, false, 1, {1, 1, 1, 1}},
    {"s2_sgd_accumulate", 2, DT_OPTIM_SGD, false, 3, {2, 2}},
    {"s3_adamw", 3, DT_OPTIM_ADAMW, false, 1, {1, 1, 1, 1}},
    {"s3_sgd_accumulate", 3, DT_OPTIM_SGD, false, 2, {2, 2}},
    {"s1_adamw_bf16", 1, DT_OPTIM_ADAMW, true, 1, {2, 2}},
    {"s3_adamw_bf16", 3, DT_OPTIM_ADAMW, true, 2, {1, 3}},
};

TEST_F(GpuZero, EqualToTheHostInEveryStage) {
  constexpr int kSteps = 3;
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Training> host = create(c, false);
    std::unique_ptr<Training> gpu = create(c, true);
    ASSERT_NE(host->zero, nullptr);
    ASSERT_NE(gpu->zero, nullptr);
    expect_same_memory(host->zero, gpu->zero, c, size_);
    EXPECT_EQ(relative_error(read(*gpu, c), read(*host, c)), 0.0) << "the initial parameters differ";
    const double tolerance = c.bf16 ? 1e-2 : 1e-5;
    for (int s = 0; s < kSteps; ++s) {
      for (int m = 0; m < c.micro_steps; ++m) {
        const Batch batch = Batch::make(static_cast<std::size_t>(6 * size_), 1000u + 10u * s + m);
        micro_step(*host, c, batch);
        micro_step(*gpu, c, batch);
      }
      const dt_optimizer_step_info a = step(*host);
      const dt_optimizer_step_info b = step(*gpu);
      EXPECT_EQ(a.skipped, b.skipped);
      EXPECT_NEAR(a.grad_norm, b.grad_norm, 1e-4 * std::max(1.0, static_cast<double>(a.grad_norm)));
      const double error = relative_error(read(*gpu, c), read(*host, c));
      EXPECT_LE(error, tolerance) << "after step " << s;
      expect_same_memory(host->zero, gpu->zero, c, size_);
    }
  }
}

TEST_F(GpuZero, DescribesDeviceMemory) {
  const Case c{"s3", 3, DT_OPTIM_ADAMW, false, 1, {2, 2}};
  std::unique_ptr<Training> gpu = create(c, true);
  ASSERT_NE(gpu->zero, nullptr);
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  ASSERT_EQ(dt_zero_gather_wait(gpu->zero, 1, -1), DT_OK) << dt_error_last();
  for (std::size_t i : {2u, 3u}) {
    DLTensor p{}, g{};
    ASSERT_EQ(dt_zero_parameter(gpu->zero, i, &p), DT_OK) << dt_error_last();
    ASSERT_EQ(dt_zero_gradient(gpu->zero, i, &g), DT_OK) << dt_error_last();
    for (const DLTensor* t : {&p, &g}) {
      EXPECT_EQ(t->device.device_type, kDLCUDA);
      EXPECT_EQ(t->device.device_id, device);
      cudaPointerAttributes attributes{};
      check(cudaPointerGetAttributes(&attributes, t->data), "cudaPointerGetAttributes");
      EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
      EXPECT_EQ(attributes.device, device);
    }
  }
  ASSERT_EQ(dt_zero_release(gpu->zero, 1), DT_OK);
  // A parameter of a released unit is refused, as on the host.
  DLTensor p{};
  EXPECT_EQ(dt_zero_parameter(gpu->zero, 2, &p), DT_ERR_INVALID_USAGE);
}

TEST_F(GpuZero, CheckpointsMoveBetweenHostAndDevice) {
  // Every rank names the same directory: dtrun is their common parent.
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("dtrain_zero_gpu_" + std::to_string(static_cast<long>(getppid()))))
                              .string();
  const Case c{"s2_adamw", 2, DT_OPTIM_ADAMW, false, 1, {2, 2}};
  std::unique_ptr<Training> gpu = create(c, true);
  std::unique_ptr<Training> host = create(c, false);
  for (int s = 0; s < 2; ++s) {
    const Batch batch = Batch::make(static_cast<std::size_t>(6 * size_), 50u + s);
    micro_step(*gpu, c, batch);
    step(*gpu);
  }
  // Device to host: the host dt_zero takes the trained weights and moments.
  ASSERT_EQ(dt_zero_save(gpu->zero, (dir + "/from_gpu").c_str()), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_zero_load(host->zero, (dir + "/from_gpu").c_str()), DT_OK) << dt_error_last();
  EXPECT_EQ(relative_error(read(*host, c), read(*gpu, c)), 0.0);
  // Host to device, into a fresh dt_zero.
  ASSERT_EQ(dt_zero_save(host->zero, (dir + "/from_host").c_str()), DT_OK) << dt_error_last();
  std::unique_ptr<Training> fresh = create(c, true);
  ASSERT_EQ(dt_zero_load(fresh->zero, (dir + "/from_host").c_str()), DT_OK) << dt_error_last();
  EXPECT_EQ(relative_error(read(*fresh, c), read(*host, c)), 0.0);
  // The moments came along: one more step agrees everywhere.
  const Batch batch = Batch::make(static_cast<std::size_t>(6 * size_), 99u);
  for (Training* run : std::vector<Training*>{gpu.get(), host.get(), fresh.get()}) {
    micro_step(*run, c, batch);
    step(*run);
  }
  EXPECT_LE(relative_error(read(*host, c), read(*gpu, c)), 1e-5);
  EXPECT_LE(relative_error(read(*fresh, c), read(*gpu, c)), 1e-5);
  dt_barrier(comm_);
  if (rank_ == 0) std::filesystem::remove_all(dir);
}

TEST_F(GpuZero, RefusesParametersInTwoPlaces) {
  Trainer device(true, false), host(false, false);
  const Mlp model(1);
  std::vector<const DLTensor*> params = device.parameters(model);
  const std::vector<const DLTensor*> on_host = host.parameters(model);
  params[1] = on_host[1];
  dt_zero* z = nullptr;
  EXPECT_EQ(dt_zero_create(&z, comm_, params.data(), params.size(), nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("params[1]"), std::string::npos) << dt_error_last();
  EXPECT_EQ(z, nullptr);
}

}  // namespace

int main(int argc, char** argv) { return dtrain::testing::gpu_test_main(argc, argv); }
