#include "parallel/ddp/bucket.hpp"

#include "base/flat_tensor.hpp"
#include "comm/deadline.hpp"

namespace dtrain::parallel::ddp {

Bucket::Bucket(device::Queue& queue, DType wire, const std::vector<std::size_t>& gradients,
               const std::vector<TensorView>& views)
    : queue_(&queue), wire_(wire) {
  for (std::size_t gradient : gradients) {
    slots_.push_back(Slot{gradient, views[gradient], count_});
    count_ += views[gradient].count;
  }
  storage_ = device::Buffer(queue, static_cast<std::size_t>(count_) * dtype_size(wire_));
}

void* Bucket::at(std::int64_t offset) const {
  return storage_.at(static_cast<std::size_t>(offset) * dtype_size(wire_));
}

void Bucket::fill(std::size_t s, double scale) {
  const Slot& slot = slots_[s];
  queue_->cast(wire_, at(slot.offset), slot.view.dtype, slot.view.data, slot.view.count, scale);
  ++filled_;
}

void Bucket::fill_zero(std::size_t s) {
  const Slot& slot = slots_[s];
  queue_->zero(at(slot.offset), static_cast<std::size_t>(slot.view.count) * dtype_size(wire_));
  ++filled_;
}

void Bucket::launch(comm::Communicator& comm) {
  if (count_ > 0) {
    FlatTensor buffer(storage_.data(), count_, wire_, queue_->dlpack_device());
    request_ = comm.allreduce(buffer.get(), buffer.get(), DT_SUM, queue_->stream());
  }
  launched_ = true;
}

BucketState Bucket::state() const {
  if (!launched_) return BucketState::waiting;
  if (!request_) return BucketState::reduced;
  if (!request_->done()) return BucketState::in_flight;
  return request_->status() == DT_OK ? BucketState::reduced : BucketState::failed;
}

void Bucket::finish(comm::Communicator& comm, comm::Clock::time_point deadline, double scale) {
  if (request_) comm::wait_until(comm, request_, deadline);
  for (const Slot& slot : slots_) {
    queue_->cast(slot.view.dtype, slot.view.data, wire_, at(slot.offset), slot.view.count, scale);
  }
}

void Bucket::drain(comm::Communicator& comm, comm::Clock::time_point deadline) noexcept {
  if (!request_) return;
  try {
    comm::wait_until(comm, request_, deadline);
  } catch (...) {
    // The step is being abandoned for another reason, which the caller reports.
  }
}

void Bucket::reset() {
  filled_ = 0;
  launched_ = false;
  request_.reset();
}

}  // namespace dtrain::parallel::ddp
