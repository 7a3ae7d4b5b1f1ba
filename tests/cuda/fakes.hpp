// Test doubles for the staged path and the router, so that their logic runs
// on machines without a GPU: "device" memory is host memory behind a
// TensorView marked Memory::cuda, and HostCopier copies it with memcpy.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/tensor.hpp"
#include "comm/backends/staged/copier.hpp"

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

struct CopierStats {
  std::atomic<int> to_host{0};
  std::atomic<int> to_device{0};
  std::atomic<long> allocated{0};
  std::atomic<long> freed{0};
  std::atomic<int> fences{0};
  std::mutex mutex;
  std::vector<void*> followed;         // the streams follow() was given, in order
  std::vector<int> copies_at_follow;   // copies queued before each follow()
};

// Copies at once; a fence is reached after `lag` polls (exercising the
// waits), or throws `failure` when set.
class HostCopier final : public comm::staged::Copier {
 public:
  explicit HostCopier(std::shared_ptr<CopierStats> stats, int lag = 2, dt_status failure = DT_OK)
      : stats_(std::move(stats)), lag_(lag), failure_(failure) {}

  void* allocate_host(std::size_t bytes) override {
    stats_->allocated += static_cast<long>(bytes);
    return ::operator new(bytes);
  }
  void free_host(void* pointer) noexcept override {
    ::operator delete(pointer);
    stats_->freed += 1;
  }
  void copy(Lane lane, const comm::staged::Copy2D& c) override {
    (lane == Lane::to_host ? stats_->to_host : stats_->to_device) += 1;
    // An empty tensor may have no data pointer; memmove must not see it.
    if (c.width == 0) return;
    for (std::size_t r = 0; r < c.rows; ++r) {
      std::memmove(static_cast<char*>(c.dst) + r * c.dst_pitch, static_cast<const char*>(c.src) + r * c.src_pitch,
                   c.width);
    }
  }
  std::unique_ptr<comm::staged::Fence> fence(Lane) override {
    stats_->fences += 1;
    return std::make_unique<LaggingFence>(lag_, failure_);
  }
  void follow(void* stream) override {
    std::lock_guard<std::mutex> lock(stats_->mutex);
    stats_->followed.push_back(stream);
    stats_->copies_at_follow.push_back(stats_->to_host + stats_->to_device);
  }
  void drain() noexcept override {}

 private:
  class LaggingFence final : public comm::staged::Fence {
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

  std::shared_ptr<CopierStats> stats_;
  int lag_;
  dt_status failure_;
};

}  // namespace dtrain::test
