// make_cuda_kernels(): the Optimizer's step on one CUDA device, through the
// fused multi-tensor kernels. One launch per update and two per norm, whatever
// the number of tensors; the chunk table is built and uploaded once.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "base/error.hpp"
#include "device/cuda/error.hpp"
#include "device/cuda/kernels.hpp"
#include "device/cuda/optim_kernels.hpp"
#include "device/cuda/runtime.hpp"
#include "optim/device_kernels.hpp"

namespace dtrain::optim {

namespace {

namespace cuda = device::cuda;
namespace fused = device::cuda::optim;

// Every master and state buffer starts on a 256-byte boundary, so that the
// kernels' 16-byte accesses apply to them whatever the tensor sizes.
constexpr std::size_t kAlignFloats = 64;

std::size_t padded(std::int64_t count) {
  const auto n = static_cast<std::size_t>(count);
  return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
}

fused::SgdConstants constants_of(const SgdStep& s) {
  fused::SgdConstants c;
  c.grad_factor = s.grad.factor;
  c.lr = s.lr;
  c.weight_decay = s.weight_decay;
  c.momentum = s.momentum;
  c.nesterov = s.nesterov;
  c.keep = s.keep;
  c.take = s.take;
  c.momentum_factor = s.momentum_factor;
  return c;
}

fused::AdamwConstants constants_of(const AdamwStep& s) {
  fused::AdamwConstants c;
  c.grad_factor = s.grad.factor;
  c.lr_weight_decay = s.lr_weight_decay;
  c.beta1 = s.beta1;
  c.one_minus_beta1 = s.one_minus_beta1;
  c.beta2 = s.beta2;
  c.one_minus_beta2 = s.one_minus_beta2;
  c.step_size = s.step_size;
  c.inv_sqrt_bias2 = s.inv_sqrt_bias2;
  c.eps = s.eps;
  return c;
}

class CudaKernels final : public DeviceKernels {
 public:
  CudaKernels(int device, std::vector<Slot>& slots, int buffers) : device_(device), stream_(device) {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      cuda::check_device_memory(slots[i].param.data, slots[i].param.bytes(), "params[" + std::to_string(i) + "]", device_);
      cuda::check_device_memory(slots[i].grad.data, slots[i].grad.bytes(), "grads[" + std::to_string(i) + "]", device_);
    }
    cuda::DeviceGuard guard(device_);
    std::size_t floats = 0;
    for (const Slot& slot : slots) {
      floats += padded(slot.count()) * static_cast<std::size_t>(buffers + (needs_master(slot.param.dtype) ? 1 : 0));
    }
    storage_ = cuda::DeviceBuffer(device_, floats * sizeof(float));
    // Fresh state is all zeros (all-zero bits are +0.0f).
    if (floats > 0) cuda::check(cudaMemsetAsync(storage_.data(), 0, storage_.size(), stream_.get()), "cudaMemsetAsync");

    float* next = static_cast<float*>(storage_.data());
    std::vector<fused::Tensor> tensors;
    tensors.reserve(slots.size());
    for (Slot& slot : slots) {
      if (needs_master(slot.param.dtype)) {
        slot.master = next;
        next += padded(slot.count());
      }
      for (int b = 0; b < buffers; ++b) {
        slot.state[b] = next;
        next += padded(slot.count());
      }
      if (slot.master) {
        cuda::cast(DType::f32, slot.master, slot.param.dtype, slot.param.data, slot.count(), stream_.get());
      }
      fused::Tensor t;
      t.dtype = slot.param.dtype;
      t.param = slot.param.data;
      t.grad = slot.grad.data;
      t.master = slot.master;
      t.state[0] = slot.state[0];
      t.state[1] = slot.state[1];
      t.count = slot.count();
      tensors.push_back(t);
      if (slot.grad.count > 0) grads_.emplace_back(slot.grad.data, slot.grad.bytes());
    }

    const std::vector<fused::Chunk> chunks = fused::make_chunks(tensors);
    chunks_ = static_cast<std::int64_t>(chunks.size());
    table_ = cuda::DeviceBuffer(device_, chunks.size() * sizeof(fused::Chunk));
    if (!chunks.empty()) cuda::copy_async(table_.data(), chunks.data(), table_.size(), stream_.get());
    // One partial sum per chunk, then the total.
    norm_ = cuda::DeviceBuffer(device_, static_cast<std::size_t>(chunks_ + 1) * sizeof(double));
    norm_host_ = cuda::PinnedBuffer(sizeof(double));
    // `chunks` is read by the copy above, so wait before it goes; this also
    // reports a failed allocation or cast here rather than at the first step.
    stream_.synchronize();
  }

  double squared_norm() override {
    cuda::DeviceGuard guard(device_);
    double* partials = static_cast<double*>(norm_.data());
    fused::squared_norm(table(), chunks_, partials, partials + chunks_, stream_.get());
    cuda::copy_async(norm_host_.data(), partials + chunks_, sizeof(double), stream_.get());
    stream_.synchronize();
    return *static_cast<const double*>(norm_host_.data());
  }

  void sgd_update(const SgdStep& step) override {
    cuda::DeviceGuard guard(device_);
    fused::sgd_update(constants_of(step), table(), chunks_, stream_.get());
    stream_.synchronize();
  }

  void adamw_update(const AdamwStep& step) override {
    cuda::DeviceGuard guard(device_);
    fused::adamw_update(constants_of(step), table(), chunks_, stream_.get());
    stream_.synchronize();
  }

  void zero_grads() override {
    cuda::DeviceGuard guard(device_);
    // All-zero bits are +0.0 in every floating dtype.
    for (const auto& [data, bytes] : grads_) {
      cuda::check(cudaMemsetAsync(data, 0, bytes, stream_.get()), "cudaMemsetAsync of a gradient");
    }
    stream_.synchronize();
  }

 private:
  const fused::Chunk* table() const { return static_cast<const fused::Chunk*>(table_.data()); }

  int device_;
  cuda::Stream stream_;
  cuda::DeviceBuffer storage_;  // every Slot's master weights and state
  cuda::DeviceBuffer table_;    // the Chunks
  std::int64_t chunks_ = 0;
  cuda::DeviceBuffer norm_;
  cuda::PinnedBuffer norm_host_;
  std::vector<std::pair<void*, std::size_t>> grads_;
};

}  // namespace

std::unique_ptr<DeviceKernels> make_cuda_kernels(int device, std::vector<Slot>& slots, int buffers) {
  return std::make_unique<CudaKernels>(device, slots, buffers);
}

}  // namespace dtrain::optim
