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

MemoryLedger::~MemoryLedger() {
  for (const Kept& k : kept_) k.queue->release(k.data, static_cast<std::size_t>(k.bytes));
}

void MemoryLedger::count(Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes) {
  field(purpose) += bytes;
  usage_.padding += padding_bytes;
  usage_.peak = std::max(usage_.peak, usage_.total());
}

void MemoryLedger::add(Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  count(purpose, bytes, padding_bytes);
  shrink_kept(usage_.peak);
}

void* MemoryLedger::allocate(device::Queue& queue, Purpose purpose, std::int64_t bytes, std::int64_t padding_bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto same = std::find_if(kept_.begin(), kept_.end(),
                                 [&](const Kept& k) { return k.queue == &queue && k.bytes == bytes; });
  void* data = nullptr;
  if (same != kept_.end()) {
    data = same->data;
    kept_bytes_ -= bytes;
    kept_.erase(same);
  }
  // Counted before the queue allocates, so that a thread allocating
  // meanwhile makes room beside this buffer too.
  count(purpose, bytes, padding_bytes);
  if (data != nullptr) return data;
  shrink_kept(usage_.peak);
  lock.unlock();
  try {
    return queue.allocate_unset(static_cast<std::size_t>(bytes));
  } catch (...) {
    lock.lock();
    count(purpose, -bytes, -padding_bytes);
    throw;
  }
}

void MemoryLedger::release(device::Queue& queue, void* data, Purpose purpose, std::int64_t bytes,
                           std::int64_t padding_bytes) noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  count(purpose, -bytes, -padding_bytes);
  // Device memory has its own pool (cudaMallocAsync's), and an empty buffer
  // no pages. Keeping moves bytes from alive to kept: the sum stays under
  // the peak.
  if (queue.memory() == Memory::host && bytes > 0) {
    try {
      kept_.push_back({&queue, data, bytes});
      kept_bytes_ += bytes;
      return;
    } catch (...) {
      // No room to note it: give it back instead.
    }
  }
  lock.unlock();
  queue.release(data, static_cast<std::size_t>(bytes));
}

MemoryUsage MemoryLedger::usage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return usage_;
}

std::int64_t MemoryLedger::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_bytes_;
}

void MemoryLedger::shrink_kept(std::int64_t ceiling) noexcept {
  // Oldest first: the sizes a step has stopped asking for go before the
  // ones it has just given back.
  std::size_t given = 0;
  while (given < kept_.size() && usage_.total() + kept_bytes_ > ceiling) {
    kept_[given].queue->release(kept_[given].data, static_cast<std::size_t>(kept_[given].bytes));
    kept_bytes_ -= kept_[given].bytes;
    ++given;
  }
  kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(given));
}

TrackedBuffer::TrackedBuffer(MemoryLedger& ledger, device::Queue& queue, Purpose purpose, DType dtype,
                             std::int64_t count, std::int64_t padding, Initial initial)
    : queue_(&queue),
      purpose_(purpose),
      dtype_(dtype),
      bytes_(count * static_cast<std::int64_t>(dtype_size(dtype))),
      padding_bytes_(padding * static_cast<std::int64_t>(dtype_size(dtype))),
      data_(ledger.allocate(queue, purpose, bytes_, padding_bytes_)) {
  ledger_ = &ledger;
  if (initial == Initial::zeroed) fill_zero();
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
  ledger_->release(*queue_, std::exchange(data_, nullptr), purpose_, bytes_, padding_bytes_);
  ledger_ = nullptr;
}

}  // namespace dtrain::parallel::zero
