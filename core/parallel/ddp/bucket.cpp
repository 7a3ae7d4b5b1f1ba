#include "parallel/ddp/bucket.hpp"

#include "base/flat_tensor.hpp"
#include "comm/deadline.hpp"

namespace dtrain::parallel::ddp {

Bucket::Bucket(BucketDevice& device, DType wire, const std::vector<std::size_t>& gradients,
               const std::vector<TensorView>& views)
    : device_(&device), wire_(wire) {
  for (std::size_t gradient : gradients) {
    slots_.push_back(Slot{gradient, views[gradient], count_});
    count_ += views[gradient].count;
  }
  storage_ = device.allocate(static_cast<std::size_t>(count_) * dtype_size(wire_));
}

void* Bucket::at(std::int64_t offset) const {
  return static_cast<std::byte*>(storage_) + offset * static_cast<std::int64_t>(dtype_size(wire_));
}

void Bucket::fill(std::size_t s, double scale) {
  const Slot& slot = slots_[s];
  device_->pack(slot.view, wire_, at(slot.offset), scale);
  ++filled_;
}

void Bucket::fill_zero(std::size_t s) {
  const Slot& slot = slots_[s];
  device_->zero(wire_, at(slot.offset), slot.view.count);
  ++filled_;
}

void Bucket::launch(comm::Communicator& comm) {
  if (count_ > 0) {
    FlatTensor buffer(storage_, count_, wire_, device_->device());
    request_ = comm.allreduce(buffer.get(), buffer.get(), DT_SUM, device_->stream());
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
  for (const Slot& slot : slots_) device_->unpack(wire_, at(slot.offset), slot.view, scale);
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
