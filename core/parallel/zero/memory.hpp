// Exact accounting of the memory a Zero holds: every buffer it allocates is
// counted, by purpose, while it lives, and the bytes of padding in it are
// counted again on their own. What the C API reports as dt_zero_memory.
//
// The ledger also keeps released host buffers for the next buffer of the
// same size. Stage 3 gathers every unit and allocates every unit's gradient
// buffer afresh each step; given back to the C allocator, buffers of
// megabytes return to the kernel and every page of the next one faults in
// again (on a loaded host, several microseconds a page). What the ledger
// keeps is bounded so that the buffers alive and the buffers kept together
// never exceed the peak: a Zero holds no more than dt_zero_memory's `peak`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "base/dtype.hpp"
#include "base/tensor.hpp"
#include "device/queue.hpp"

namespace dtrain::parallel::zero {

enum class Purpose { parameters, gradients, optimizer_state, master_weights, communication };

struct MemoryUsage {
  std::int64_t parameters = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer_state = 0;
  std::int64_t master_weights = 0;
  std::int64_t communication = 0;
  std::int64_t padding = 0;  // included in the five above
  std::int64_t peak = 0;     // the largest total of the five since creation

  std::int64_t total() const { return parameters + gradients + optimizer_state + master_weights + communication; }
};

// Thread-safe: gradient buffers are allocated from backward's threads.
// Must outlive every TrackedBuffer it counts, and be outlived by the queues
// whose memory it keeps.
class MemoryLedger {
 public:
  MemoryLedger() = default;
  MemoryLedger(const MemoryLedger&) = delete;
  MemoryLedger& operator=(const MemoryLedger&) = delete;
  ~MemoryLedger();

  // Counts `bytes` that another part of the library allocated (the
  // optimizer's state) under `purpose`, for as long as the ledger lives.
  void add(Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes);
  // `bytes` of `queue`'s memory, counted under `purpose`: a kept buffer of
  // exactly that size when there is one (its contents are whatever was
  // there), else a new one from the queue. Throws DT_ERR_OUT_OF_MEMORY.
  void* allocate(device::Queue& queue, Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes);
  // Stops counting `data` and keeps it for a later allocate() when it is
  // host memory, else gives it back to the queue. An allocate() that finds
  // no kept buffer of its size first gives kept ones back, oldest first,
  // until the new buffer fits under the peak beside them.
  void release(device::Queue& queue, void* data, Purpose purpose, std::int64_t bytes,
               std::int64_t padding_bytes) noexcept;
  MemoryUsage usage() const;
  // Bytes of released buffers held for reuse: usage().total() + kept() never
  // exceeds usage().peak.
  std::int64_t kept() const;

 private:
  struct Kept {
    device::Queue* queue;
    void* data;
    std::int64_t bytes;
  };

  std::int64_t& field(Purpose purpose);
  // Adds `bytes` (negative: takes them away) under `purpose`; the caller holds the mutex.
  void count(Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes);
  // Gives kept buffers back, oldest first, until they fit under `ceiling`
  // beside the buffers alive.
  void shrink_kept(std::int64_t ceiling) noexcept;

  mutable std::mutex mutex_;
  MemoryUsage usage_;
  std::vector<Kept> kept_;
  std::int64_t kept_bytes_ = 0;
};

// A buffer of `count` elements in `queue`'s memory, counted by `ledger`
// under `purpose` (`padding` of its elements as padding) for as long as it
// lives: zeroed, or `unset` for one the next work overwrites whole (a
// gathered unit). Aligned for any element type. Both must outlive it.
class TrackedBuffer {
 public:
  enum class Initial { zeroed, unset };

  TrackedBuffer() = default;
  TrackedBuffer(MemoryLedger& ledger, device::Queue& queue, Purpose purpose, DType dtype, std::int64_t count,
                std::int64_t padding, Initial initial = Initial::zeroed);
  TrackedBuffer(TrackedBuffer&& other) noexcept;
  TrackedBuffer& operator=(TrackedBuffer&& other) noexcept;
  ~TrackedBuffer();

  bool allocated() const { return ledger_ != nullptr; }
  // Element `index`'s address.
  std::byte* at(std::int64_t index) const {
    return static_cast<std::byte*>(data_) + index * static_cast<std::int64_t>(dtype_size(dtype_));
  }
  // Elements [first, first + count), in the queue's memory and on its stream.
  TensorView view(std::int64_t first, std::int64_t count) const;
  // Zeroes every element (queued on the queue).
  void fill_zero();
  // Gives the memory back to the queue (freed after the work queued there so far).
  void reset();

 private:
  MemoryLedger* ledger_ = nullptr;
  device::Queue* queue_ = nullptr;
  Purpose purpose_ = Purpose::parameters;
  DType dtype_ = DType::f32;
  std::int64_t bytes_ = 0;
  std::int64_t padding_bytes_ = 0;
  void* data_ = nullptr;
};

}  // namespace dtrain::parallel::zero
