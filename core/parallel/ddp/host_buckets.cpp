// Buckets in host memory: conversions by the CPU loops, at once.
#include <cstring>
#include <vector>

#include "base/error.hpp"
#include "device/cpu/convert.hpp"
#include "parallel/ddp/bucket_device.hpp"
#include "parallel/ddp/cuda_buckets.hpp"

namespace dtrain::parallel::ddp {

namespace {

class HostBuckets final : public BucketDevice {
 public:
  void* allocate(std::size_t bytes) override {
    // 256-byte units: aligned for any dtype and for vector loads.
    buffers_.emplace_back((bytes + sizeof(Unit) - 1) / sizeof(Unit));
    return buffers_.back().data();
  }
  DLDevice device() const override { return {kDLCPU, 0}; }
  void* stream() const override { return nullptr; }

  void pack(const TensorView& gradient, DType wire, void* bucket, double scale) override {
    device::cpu::scaled_copy(gradient.dtype, gradient.data, wire, bucket, gradient.count, scale);
  }
  void zero(DType wire, void* bucket, std::int64_t count) override {
    // All-zero bits are +0.0 in every floating format.
    std::memset(bucket, 0, static_cast<std::size_t>(count) * dtype_size(wire));
  }
  void unpack(DType wire, const void* bucket, const TensorView& gradient, double scale) override {
    device::cpu::scaled_copy(wire, bucket, gradient.dtype, gradient.data, gradient.count, scale);
  }
  void finish() override {}

 private:
  struct alignas(256) Unit {
    std::byte bytes[256];
  };
  std::vector<std::vector<Unit>> buffers_;
};

}  // namespace

std::unique_ptr<BucketDevice> make_bucket_device(std::span<const TensorView> gradients, Compression compression,
                                                 void* stream) {
  if (gradients.empty() || gradients[0].memory == Memory::host) return std::make_unique<HostBuckets>();
#ifdef DTRAIN_HAVE_CUDA
  return make_cuda_buckets(gradients, compression, stream);
#else
  // device::check_tensor refuses CUDA tensors in a build without CUDA.
  (void)compression;
  (void)stream;
  raise(DT_ERR_INTERNAL, "CUDA gradients reached a libdtrain built without CUDA");
#endif
}

}  // namespace dtrain::parallel::ddp
