#include "device/buffer.hpp"

#include <utility>

namespace dtrain::device {

Buffer::Buffer(Queue& queue, std::size_t bytes, Contents contents)
    : data_(contents == Contents::zeroed ? queue.allocate(bytes) : queue.allocate_unset(bytes)), bytes_(bytes) {
  // Set last: a failed allocation leaves nothing to give back.
  queue_ = &queue;
}

Buffer::Buffer(Buffer&& other) noexcept
    : queue_(std::exchange(other.queue_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    queue_ = std::exchange(other.queue_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

TensorView Buffer::view(std::size_t offset, std::int64_t count, DType dtype) const {
  return queue_->view(at(offset), count, dtype);
}

void Buffer::reset() noexcept {
  if (queue_ == nullptr) return;
  queue_->release(data_, bytes_);
  queue_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace dtrain::device
