// The staged path's copier on a CUDA device: pinned memory from
// cudaHostAlloc, one stream per lane (both ordered after work on the legacy
// default stream), events as fences. Also the check that a kDLCUDA tensor's
// pointer really is memory of the communicator's device.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "base/tensor.hpp"
#include "comm/backends/staged/copier.hpp"
#include "device/cuda/runtime.hpp"

namespace dtrain::comm::staged {

class CudaCopier final : public Copier {
 public:
  explicit CudaCopier(int device);
  ~CudaCopier() override;

  void* allocate_host(std::size_t bytes) override;
  void free_host(void* pointer) noexcept override;
  void copy(Lane lane, const Copy2D& copy) override;
  std::unique_ptr<Fence> fence(Lane lane) override;
  void follow(void* stream) override;
  void drain() noexcept override;

  // Takes a spare event, or makes one; give_back returns it.
  std::unique_ptr<device::cuda::Event> take_event();
  void give_back(std::unique_ptr<device::cuda::Event> event);

 private:
  const device::cuda::Stream& stream(Lane lane) const { return lane == Lane::to_host ? to_host_ : to_device_; }

  const int device_;
  device::cuda::Stream to_host_;
  device::cuda::Stream to_device_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<device::cuda::Event>> spare_;
};

}  // namespace dtrain::comm::staged
