// The CUDA FusedUpdate (device/fused_update.hpp): the optimizer's step over
// Slots on one device, through the fused multi-tensor kernels
// (optim_kernels.hpp) on the Queue's stream. One launch per update and two
// per norm, whatever the number of tensors; the chunk table is built and
// uploaded once.
#include "device/cuda/fused_update.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "device/cuda/error.hpp"
#include "device/cuda/kernels.hpp"
#include "device/cuda/optim_kernels.hpp"
#include "device/cuda/runtime.hpp"

namespace dtrain::device::cuda {

namespace {

namespace fused = device::cuda::optim;

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

class CudaFusedUpdate final : public FusedUpdate {
 public:
  CudaFusedUpdate(int device, cudaStream_t stream, std::span<const Slot> slots) : device_(device), stream_(stream) {
    for (std::size_t i = 0; i < slots.size(); ++i) {
      check_device_memory(slots[i].param.data, slots[i].param.bytes(), "params[" + std::to_string(i) + "]", device_);
      check_device_memory(slots[i].grad.data, slots[i].grad.bytes(), "grads[" + std::to_string(i) + "]", device_);
    }
    DeviceGuard guard(device_);
    std::vector<fused::Tensor> tensors;
    tensors.reserve(slots.size());
    for (const Slot& slot : slots) {
      fused::Tensor t;
      t.dtype = slot.param.dtype;
      t.param = slot.param.data;
      t.grad = slot.grad.data;
      t.master = slot.master;
      t.state[0] = slot.state[0];
      t.state[1] = slot.state[1];
      t.count = slot.count();
      tensors.push_back(t);
    }
    const std::vector<fused::Chunk> chunks = fused::make_chunks(tensors);
    chunks_ = static_cast<std::int64_t>(chunks.size());
    table_ = DeviceBuffer(device_, chunks.size() * sizeof(fused::Chunk));
    if (!chunks.empty()) copy_async(table_.data(), chunks.data(), table_.size(), stream_);
    // One partial sum per chunk, then the total.
    norm_ = DeviceBuffer(device_, static_cast<std::size_t>(chunks_ + 1) * sizeof(double));
    norm_host_ = PinnedBuffer(sizeof(double));
    // `chunks` is read by the copy above, so wait before it goes.
    synchronize();
  }

  double squared_norm() override {
    DeviceGuard guard(device_);
    double* partials = static_cast<double*>(norm_.data());
    fused::squared_norm(table(), chunks_, partials, partials + chunks_, stream_);
    copy_async(norm_host_.data(), partials + chunks_, sizeof(double), stream_);
    synchronize();
    return *static_cast<const double*>(norm_host_.data());
  }

  void sgd(const SgdStep& step) override {
    DeviceGuard guard(device_);
    fused::sgd_update(constants_of(step), table(), chunks_, stream_);
    synchronize();
  }

  void adamw(const AdamwStep& step) override {
    DeviceGuard guard(device_);
    fused::adamw_update(constants_of(step), table(), chunks_, stream_);
    synchronize();
  }

 private:
  const fused::Chunk* table() const { return static_cast<const fused::Chunk*>(table_.data()); }
  void synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  const int device_;
  const cudaStream_t stream_;  // the Queue's
  DeviceBuffer table_;         // the Chunks
  std::int64_t chunks_ = 0;
  DeviceBuffer norm_;
  PinnedBuffer norm_host_;
};

}  // namespace

std::unique_ptr<FusedUpdate> make_fused_update(int device, cudaStream_t stream, std::span<const Slot> slots) {
  return std::make_unique<CudaFusedUpdate>(device, stream, slots);
}

}  // namespace dtrain::device::cuda
