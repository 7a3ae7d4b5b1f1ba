#include "parallel/ddp/bucket.hpp"


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
}

void Bucket::fill_zero(std::size_t s) {
  const Slot& slot = slots_[s];
  queue_->zero(at(slot.offset), static_cast<std::size_t>(slot.view.count) * dtype_size(wire_));
}

comm::RequestPtr Bucket::launch(comm::Communicator& comm) {
  if (count_ == 0) return nullptr;
  const TensorView buffer = storage_.view(0, count_, wire_);
  return comm.allreduce(buffer, buffer, DT_SUM);
}

void Bucket::unpack(double scale) {
  for (const Slot& slot : slots_) {
    queue_->cast(slot.view.dtype, slot.view.data, wire_, at(slot.offset), slot.view.count, scale);
  }
}

}  // namespace dtrain::parallel::ddp
