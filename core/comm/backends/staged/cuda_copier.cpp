#include "comm/backends/staged/cuda_copier.hpp"

#include <string>
#include <utility>

#include "base/error.hpp"
#include "device/cuda/error.hpp"

namespace dtrain::comm::staged {

namespace {

using device::cuda::DeviceGuard;

class EventFence final : public Fence {
 public:
  EventFence(CudaCopier& owner, std::unique_ptr<device::cuda::Event> event)
      : owner_(owner), event_(std::move(event)) {}
  ~EventFence() override { owner_.give_back(std::move(event_)); }
  bool reached() override { return event_->query(); }

 private:
  CudaCopier& owner_;
  std::unique_ptr<device::cuda::Event> event_;
};

}  // namespace

CudaCopier::CudaCopier(int device) : device_(device), to_host_(device), to_device_(device) {}

CudaCopier::~CudaCopier() { drain(); }

void* CudaCopier::allocate_host(std::size_t bytes) {
  void* pointer = nullptr;
  device::cuda::check(cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable),
                      "cudaHostAlloc of " + std::to_string(bytes) + " bytes of pinned staging memory");
  return pointer;
}

void CudaCopier::free_host(void* pointer) noexcept {
  if (pointer != nullptr) cudaFreeHost(pointer);
}

void CudaCopier::copy(Lane lane, const Copy2D& c) {
  DeviceGuard guard(device_);
  device::cuda::copy_2d_async(c.dst, c.dst_pitch, c.src, c.src_pitch, c.width, c.rows, stream(lane).get());
}

std::unique_ptr<Fence> CudaCopier::fence(Lane lane) {
  DeviceGuard guard(device_);
  auto event = take_event();
  event->record(stream(lane).get());
  return std::make_unique<EventFence>(*this, std::move(event));
}

void CudaCopier::follow(void* stream) {
  if (stream == nullptr) return;
  DeviceGuard guard(device_);
  auto event = take_event();
  event->record(static_cast<cudaStream_t>(stream));
  device::cuda::check(cudaStreamWaitEvent(to_host_.get(), event->get(), 0), "cudaStreamWaitEvent");
  device::cuda::check(cudaStreamWaitEvent(to_device_.get(), event->get(), 0), "cudaStreamWaitEvent");
  give_back(std::move(event));  // the waits hold what they need of it
}

void CudaCopier::drain() noexcept {
  cudaStreamSynchronize(to_host_.get());
  cudaStreamSynchronize(to_device_.get());
}

std::unique_ptr<device::cuda::Event> CudaCopier::take_event() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_.empty()) {
      auto event = std::move(spare_.back());
      spare_.pop_back();
      return event;
    }
  }
  return std::make_unique<device::cuda::Event>(device_);
}

void CudaCopier::give_back(std::unique_ptr<device::cuda::Event> event) {
  std::lock_guard<std::mutex> lock(mutex_);
  spare_.push_back(std::move(event));
}

}  // namespace dtrain::comm::staged
