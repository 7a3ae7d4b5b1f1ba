// Test doubles for the staged path and the router, so that their logic runs
// on machines without a GPU: "device" memory is host memory behind a
// TensorView marked Memory::cuda, and FakeLane copies it with memmove.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/tensor.hpp"
#include "comm/backends/staged/staged_backend.hpp"
#include "device/queue.hpp"

namespace dtrain::test {

// A view of `data` as memory of the given kind (device id 0).
template <typename T>
TensorView view_of(T* data, std::int64_t count, DType dtype, Memory memory) {
  TensorView view;
  view.data = data;
  view.count = count;
  view.dtype = dtype;
  view.memory = memory;
  view.device_id = 0;
  return view;
}

struct LaneStats {
  std::atomic<int> to_host{0};
  std::atomic<int> to_device{0};
  std::atomic<long> allocated{0};
  std::atomic<long> freed{0};
  std::atomic<int> fences{0};
  std::mutex mutex;
  std::vector<void*> followed;         // the streams the to-host lane waited for, in order
  std::vector<int> copies_at_follow;   // copies queued before each of those waits
};

// A staged lane over host memory posing as device memory: copies at once,
// counted by direction; a fence is reached after `lag` polls (exercising
// the waits), or throws `failure` when set. Everything else is a host
// Queue's.
class FakeLane final : public device::Queue {
 public:
  enum class Direction { to_host, to_device };

  FakeLane(Direction direction, std::shared_ptr<LaneStats> stats, int lag, dt_status failure)
      : direction_(direction), stats_(std::move(stats)), lag_(lag), failure_(failure) {}

  Memory memory() const override { return Memory::cuda; }
  int device_id() const override { return 0; }
  void* stream() const override { return nullptr; }

  void* allocate_unset(std::size_t bytes) override { return host_->allocate_unset(bytes); }
  void release(void* data, std::size_t bytes) noexcept override { host_->release(data, bytes); }
  void* allocate_pinned(std::size_t bytes) override {
    stats_->allocated += static_cast<long>(bytes);
    return host_->allocate_pinned(bytes);
  }
  void release_pinned(void* data) noexcept override {
    host_->release_pinned(data);
    stats_->freed += 1;
  }

  void zero(void* data, std::size_t bytes) override { host_->zero(data, bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override { host_->copy(dst, src, bytes); }
  void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                 std::size_t rows) override {
    (direction_ == Direction::to_host ? stats_->to_host : stats_->to_device) += 1;
    // An empty tensor may have no data pointer; memmove must not see it.
    if (row_bytes == 0) return;
    for (std::size_t r = 0; r < rows; ++r) {
      std::memmove(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch,
                   row_bytes);
    }
  }
  void fill(DType dtype, void* data, std::int64_t count, double value) override {
    host_->fill(dtype, data, count, value);
  }
  void divide(DType dtype, void* data, std::int64_t count, double divisor) override {
    host_->divide(dtype, data, count, divisor);
  }
  void add(DType dtype, void* dst, const void* src, std::int64_t count) override {
    host_->add(dtype, dst, src, count);
  }
  void cast(DType to, void* dst, DType from, const void* src, std::int64_t count, double scale) override {
    host_->cast(to, dst, from, src, count, scale);
  }
  bool can_cast(DType from, DType to) const override { return host_->can_cast(from, to); }

  void wait_for(void* stream) override {
    if (direction_ != Direction::to_host) return;
    std::lock_guard<std::mutex> lock(stats_->mutex);
    stats_->followed.push_back(stream);
    stats_->copies_at_follow.push_back(stats_->to_host + stats_->to_device);
  }
  void signal(void*) override {}
  void synchronize() override {}
  std::unique_ptr<device::Fence> fence() override {
    stats_->fences += 1;
    return std::make_unique<LaggingFence>(lag_, failure_);
  }
  std::unique_ptr<device::FusedUpdate> fused_update(std::span<const device::Slot> slots) override {
    return host_->fused_update(slots);
  }

 private:
  class LaggingFence final : public device::Fence {
   public:
    LaggingFence(int lag, dt_status failure) : left_(lag), failure_(failure) {}
    bool reached() override {
      if (failure_ != DT_OK) raise(failure_, "the fake device failed");
      return left_-- <= 0;
    }

   private:
    int left_;
    dt_status failure_;
  };

  const Direction direction_;
  std::shared_ptr<LaneStats> stats_;
  const int lag_;
  const dt_status failure_;
  std::unique_ptr<device::Queue> host_ = device::make_host_queue();
};

// Both lanes of a fake staged path, sharing `stats`.
inline comm::staged::Lanes fake_lanes(const std::shared_ptr<LaneStats>& stats, int lag = 2,
                                      dt_status failure = DT_OK) {
  return {std::make_unique<FakeLane>(FakeLane::Direction::to_host, stats, lag, failure),
          std::make_unique<FakeLane>(FakeLane::Direction::to_device, stats, lag, failure)};
}

}  // namespace dtrain::test
