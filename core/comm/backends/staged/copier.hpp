// What the staged path needs from a device: host memory the device copies
// to and from at full speed (pinned), asynchronous strided copies in two
// independent lanes (device to host, host to device), and fences that tell
// when the copies queued before them are done. The CUDA implementation is
// cuda_copier.hpp; tests use one over host memory.
#pragma once

#include <cstddef>
#include <memory>

namespace dtrain::comm::staged {

// `rows` rows of `width` bytes: row r from src + r * src_pitch to
// dst + r * dst_pitch.
struct Copy2D {
  void* dst = nullptr;
  std::size_t dst_pitch = 0;
  const void* src = nullptr;
  std::size_t src_pitch = 0;
  std::size_t width = 0;
  std::size_t rows = 1;
};

class Fence {
 public:
  virtual ~Fence() = default;
  // True once every copy queued before the fence is done; throws the
  // device's error (as a dtrain::Error) when one failed.
  virtual bool reached() = 0;
};

class Copier {
 public:
  enum class Lane { to_host, to_device };

  virtual ~Copier() = default;
  // Pinned host memory; throws DT_ERR_OUT_OF_MEMORY.
  virtual void* allocate_host(std::size_t bytes) = 0;
  virtual void free_host(void* pointer) noexcept = 0;
  // Queues a copy in `lane`; copies in one lane run in order.
  virtual void copy(Lane lane, const Copy2D& copy) = 0;
  virtual std::unique_ptr<Fence> fence(Lane lane) = 0;
  // Copies queued from now on, in both lanes, start only after the work
  // queued so far on `stream` (the caller's cudaStream_t): the device data
  // an operation reads, and the buffers it overwrites, may still be in use
  // there. Without blocking the caller. nullptr: nothing to follow.
  virtual void follow(void* stream) = 0;
  // Waits for every queued copy, ignoring errors (before memory is freed).
  virtual void drain() noexcept = 0;
};

}  // namespace dtrain::comm::staged
