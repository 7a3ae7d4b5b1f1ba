// The CUDA Queue (device/queue.hpp): a non-blocking stream on one device,
// stream-ordered allocation, pinned host memory, and events for ordering
// against the trainer's streams and for fences.
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "device/cuda/error.hpp"
#include "device/cuda/fused_update.hpp"
#include "device/cuda/kernels.hpp"
#include "device/cuda/runtime.hpp"
#include "device/queue.hpp"

namespace dtrain::device {

namespace {

// NULL names the legacy default stream, as everywhere in libdtrain's API.
cudaStream_t trainer_stream(void* stream) {
  return stream == nullptr ? cudaStreamLegacy : static_cast<cudaStream_t>(stream);
}

// Events for fences, kept for reuse: a fence per staged chunk would
// otherwise create and destroy one each time.
class EventPool {
 public:
  explicit EventPool(int device) : device_(device) {}

  std::unique_ptr<cuda::Event> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!spare_.empty()) {
        auto event = std::move(spare_.back());
        spare_.pop_back();
        return event;
      }
    }
    return std::make_unique<cuda::Event>(device_);
  }
  void give_back(std::unique_ptr<cuda::Event> event) {
    std::lock_guard<std::mutex> lock(mutex_);
    spare_.push_back(std::move(event));
  }

 private:
  const int device_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<cuda::Event>> spare_;
};

class EventFence final : public Fence {
 public:
  EventFence(std::shared_ptr<EventPool> pool, std::unique_ptr<cuda::Event> event)
      : pool_(std::move(pool)), event_(std::move(event)) {}
  ~EventFence() override { pool_->give_back(std::move(event_)); }
  bool reached() override { return event_->query(); }

 private:
  std::shared_ptr<EventPool> pool_;  // shared: a fence may outlive its Queue
  std::unique_ptr<cuda::Event> event_;
};

class CudaQueue final : public Queue {
 public:
  explicit CudaQueue(int device)
      // Non-blocking: ordered after the trainer through events only, never
      // by the legacy default stream's implicit barriers.
      : device_(device),
        stream_(device, /*non_blocking=*/true),
        ordering_(device),
        fences_(std::make_shared<EventPool>(device)) {}

  ~CudaQueue() override {
    // Memory must not be freed, nor the stream destroyed, under work still using them.
    try {
      stream_.synchronize();
    } catch (...) {
      // A failed device has nothing more to run.
    }
  }

  Memory memory() const override { return Memory::cuda; }
  int device_id() const override { return device_; }
  void* stream() const override { return stream_.get(); }

  void* allocate_unset(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    cuda::DeviceGuard guard(device_);
    void* data = nullptr;
    cuda::check(cudaMallocAsync(&data, bytes, stream_.get()),
                "cudaMallocAsync of " + std::to_string(bytes) + " bytes on device " + std::to_string(device_));
    return data;
  }

  void release(void* data, std::size_t) noexcept override {
    if (data == nullptr) return;
    try {
      cuda::DeviceGuard guard(device_);
      cudaFreeAsync(data, stream_.get());
    } catch (...) {
      // Only the guard throws, for a device that is gone with its memory.
    }
  }

  void* allocate_pinned(std::size_t bytes) override {
    void* data = nullptr;
    cuda::check(cudaHostAlloc(&data, bytes, cudaHostAllocPortable),
                "cudaHostAlloc of " + std::to_string(bytes) + " bytes of pinned host memory");
    return data;
  }
  void release_pinned(void* data) noexcept override {
    if (data != nullptr) cudaFreeHost(data);
  }

  void zero(void* data, std::size_t bytes) override {
    if (bytes == 0) return;
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaMemsetAsync(data, 0, bytes, stream_.get()), "cudaMemsetAsync");
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0 || dst == src) return;
    cuda::DeviceGuard guard(device_);
    cuda::copy_async(dst, src, bytes, stream_.get());
  }
  void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                 std::size_t rows) override {
    cuda::DeviceGuard guard(device_);
    cuda::copy_2d_async(dst, dst_pitch, src, src_pitch, row_bytes, rows, stream_.get());
  }
  void fill(DType dtype, void* data, std::int64_t count, double value) override {
    cuda::DeviceGuard guard(device_);
    cuda::fill(dtype, data, count, value, stream_.get());
  }
  void divide(DType dtype, void* data, std::int64_t count, double divisor) override {
    cuda::DeviceGuard guard(device_);
    cuda::divide(dtype, data, count, divisor, stream_.get());
  }
  void add(DType dtype, void* dst, const void* src, std::int64_t count) override {
    cuda::DeviceGuard guard(device_);
    cuda::reduce(cuda::Reduction::sum, dtype, dst, src, count, stream_.get());
  }
  void cast(DType to, void* dst, DType from, const void* src, std::int64_t count, double scale) override {
    cuda::DeviceGuard guard(device_);
    if (scale == 1.0) {
      cuda::cast(to, dst, from, src, count, stream_.get());
    } else {
      cuda::scaled_cast(to, dst, from, src, count, scale, stream_.get());
    }
  }
  bool can_cast(DType from, DType to) const override { return cuda::can_cast(from, to); }

  void wait_for(void* stream) override { order(trainer_stream(stream), stream_.get()); }
  void signal(void* stream) override { order(stream_.get(), trainer_stream(stream)); }
  void synchronize() override { stream_.synchronize(); }
  std::unique_ptr<Fence> fence() override {
    cuda::DeviceGuard guard(device_);
    auto event = fences_->take();
    event->record(stream_.get());
    return std::make_unique<EventFence>(fences_, std::move(event));
  }
  std::unique_ptr<FusedUpdate> fused_update(std::span<const Slot> slots) override {
    return cuda::make_fused_update(device_, stream_.get(), slots);
  }

 private:
  // Work queued on `later` from now on runs after the work `earlier` holds.
  void order(cudaStream_t earlier, cudaStream_t later) {
    cuda::DeviceGuard guard(device_);
    const std::lock_guard<std::mutex> lock(ordering_mutex_);
    ordering_.record(earlier);
    cuda::check(cudaStreamWaitEvent(later, ordering_.get(), 0), "cudaStreamWaitEvent");
  }

  const int device_;
  cuda::Stream stream_;
  // Recorded and waited for at once each time: a wait takes the event's
  // state when it is queued, so one event serves every ordering, one
  // thread at a time (another thread's record between the two would make
  // the wait take its stream's state instead).
  std::mutex ordering_mutex_;
  cuda::Event ordering_;
  std::shared_ptr<EventPool> fences_;
};

}  // namespace

std::unique_ptr<Queue> make_cuda_queue(int device) { return std::make_unique<CudaQueue>(device); }

}  // namespace dtrain::device
