#include "parallel/zero/memory.hpp"

#include <algorithm>
#include <utility>

namespace dtrain::parallel::zero {

std::int64_t& MemoryLedger::field(Purpose purpose) {
  switch (purpose) {
    case Purpose::parameters:
      return usage_.parameters;
    case Purpose::gradients:
      return usage_.gradients;
    case Purpose::optimizer_state:
      return usage_.optimizer_state;
    case Purpose::master_weights:
      return usage_.master_weights;
    case Purpose::communication:
      break;
  }
  return usage_.communication;
}

void MemoryLedger::add(Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  field(purpose) += bytes;
  usage_.padding += padding_bytes;
  usage_.peak = std::max(usage_.peak, usage_.total());
}

void MemoryLedger::remove(Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  field(purpose) -= bytes;
  usage_.padding -= padding_bytes;
}

MemoryUsage MemoryLedger::usage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return usage_;
}

TrackedBuffer::TrackedBuffer(MemoryLedger& ledger, device::Queue& queue, Purpose purpose, DType dtype,
                             std::int64_t count, std::int64_t padding, Initial initial)
    : queue_(&queue),
      purpose_(purpose),
      dtype_(dtype),
      bytes_(count * static_cast<std::int64_t>(dtype_size(dtype))),
      padding_bytes_(padding * static_cast<std::int64_t>(dtype_size(dtype))),
      data_(initial == Initial::zeroed ? queue.allocate(static_cast<std::size_t>(bytes_))
                                       : queue.allocate_unset(static_cast<std::size_t>(bytes_))) {
  ledger.add(purpose_, bytes_, padding_bytes_);
  ledger_ = &ledger;
}

TrackedBuffer::TrackedBuffer(TrackedBuffer&& other) noexcept
    : ledger_(std::exchange(other.ledger_, nullptr)),
      queue_(other.queue_),
      purpose_(other.purpose_),
      dtype_(other.dtype_),
      bytes_(other.bytes_),
      padding_bytes_(other.padding_bytes_),
      data_(std::exchange(other.data_, nullptr)) {}

TrackedBuffer& TrackedBuffer::operator=(TrackedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    ledger_ = std::exchange(other.ledger_, nullptr);
    queue_ = other.queue_;
    purpose_ = other.purpose_;
    dtype_ = other.dtype_;
    bytes_ = other.bytes_;
    padding_bytes_ = other.padding_bytes_;
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

TrackedBuffer::~TrackedBuffer() { reset(); }

TensorView TrackedBuffer::view(std::int64_t first, std::int64_t count) const {
  return queue_->view(at(first), count, dtype_);
}

void TrackedBuffer::fill_zero() {
  if (ledger_ != nullptr) queue_->zero(data_, static_cast<std::size_t>(bytes_));
}

void TrackedBuffer::reset() {
  if (ledger_ == nullptr) return;
  queue_->release(std::exchange(data_, nullptr), static_cast<std::size_t>(bytes_));
  ledger_->remove(purpose_, bytes_, padding_bytes_);
  ledger_ = nullptr;
}

}  // namespace dtrain::parallel::zero
