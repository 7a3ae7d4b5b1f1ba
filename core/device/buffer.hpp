// Memory a Queue allocated, owned: given back to the Queue (after the work
// queued there so far) when the Buffer is reset, reassigned or destroyed.
// The Queue must outlive every Buffer of it. Movable, not copyable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/dtype.hpp"
#include "base/tensor.hpp"
#include "device/queue.hpp"

namespace dtrain::device {

class Buffer {
 public:
  // What a new Buffer holds: zeros (Queue::allocate), or whatever was
  // there (Queue::allocate_unset), for memory the next work overwrites whole.
  enum class Contents { zeroed, unset };

  Buffer() = default;
  // `bytes` of memory from `queue`.
  Buffer(Queue& queue, std::size_t bytes, Contents contents = Contents::zeroed);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  ~Buffer() { reset(); }

  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  bool allocated() const { return queue_ != nullptr; }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  // The address `offset` bytes in.
  std::byte* at(std::size_t offset) const { return static_cast<std::byte*>(data_) + offset; }
  // `count` elements of `dtype` from byte `offset`, in the Queue's memory
  // and on its stream.
  TensorView view(std::size_t offset, std::int64_t count, DType dtype) const;
  // Gives the memory back; the Buffer is empty afterwards.
  void reset() noexcept;

 private:
  Queue* queue_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace dtrain::device
