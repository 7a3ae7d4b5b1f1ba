// Buckets in CUDA device memory: packing and unpacking are kernels queued on
// the DDP's own stream, which waits on events for the trainer's stream, so
// mark_ready() never blocks on the device.
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "base/error.hpp"
#include "device/cuda/error.hpp"
#include "device/cuda/kernels.hpp"
#include "device/cuda/runtime.hpp"
#include "parallel/ddp/bucket_plan.hpp"
#include "parallel/ddp/cuda_buckets.hpp"

namespace dtrain::parallel::ddp {

namespace {

namespace cuda = device::cuda;

class CudaBuckets final : public BucketDevice {
 public:
  CudaBuckets(int device, void* stream)
      : device_(device),
        trainer_(stream == nullptr ? cudaStreamLegacy : static_cast<cudaStream_t>(stream)),
        // Non-blocking: ordered after the trainer's stream through events
        // only, never by the legacy default stream's implicit barriers.
        work_(device, /*non_blocking=*/true),
        written_(device) {}

  ~CudaBuckets() override {
    // Buckets must not be freed under kernels or transfers still using them.
    try {
      work_.synchronize();
    } catch (...) {
      // A failed device has nothing more to run; freeing is all that is left.
    }
  }

  void* allocate(std::size_t bytes) override {
    buffers_.emplace_back(device_, bytes);
    return buffers_.back().data();
  }
  DLDevice device() const override { return {kDLCUDA, device_}; }
  void* stream() const override { return work_.get(); }

  void pack(const TensorView& gradient, DType wire, void* bucket, double scale) override {
    cuda::DeviceGuard guard(device_);
    // What backward queued so far (this gradient included) runs first.
    written_.record(trainer_);
    cuda::check(cudaStreamWaitEvent(work_.get(), written_.get(), 0), "cudaStreamWaitEvent");
    cuda::scaled_cast(wire, bucket, gradient.dtype, gradient.data, gradient.count, scale, work_.get());
  }

  void zero(DType wire, void* bucket, std::int64_t count) override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaMemsetAsync(bucket, 0, static_cast<std::size_t>(count) * dtype_size(wire), work_.get()),
                "cudaMemsetAsync");
  }

  void unpack(DType wire, const void* bucket, const TensorView& gradient, double scale) override {
    cuda::DeviceGuard guard(device_);
    cuda::scaled_cast(gradient.dtype, gradient.data, wire, bucket, gradient.count, scale, work_.get());
  }

  void finish() override { work_.synchronize(); }

 private:
  const int device_;
  const cudaStream_t trainer_;
  cuda::Stream work_;
  cuda::Event written_;  // recorded on the trainer's stream at each pack
  std::vector<cuda::DeviceBuffer> buffers_;
};

}  // namespace

std::unique_ptr<BucketDevice> make_cuda_buckets(std::span<const TensorView> gradients, Compression compression,
                                                void* stream) {
  const int device = gradients[0].device_id;
  for (std::size_t i = 0; i < gradients.size(); ++i) {
    const std::string name = "gradients[" + std::to_string(i) + "]";
    // Only float64 compresses to a pair the kernels lack.
    if (!cuda::can_cast(gradients[i].dtype, wire_dtype(gradients[i].dtype, compression))) {
      raise(DT_ERR_UNSUPPORTED, name + " is float64 on a CUDA device, which " + compression_name(compression) +
                                    " compression does not support there (float32 gradients, or no compression)");
    }
  }
  return std::make_unique<CudaBuckets>(device, stream);
}

}  // namespace dtrain::parallel::ddp
