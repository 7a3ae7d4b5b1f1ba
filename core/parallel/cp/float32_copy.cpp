#include "parallel/cp/float32_copy.hpp"

namespace dtrain::parallel::cp {

Float32Copy::Float32Copy(device::Queue& queue, const TensorView& tensor, Role role)
    : queue_(queue), tensor_(tensor), role_(role), data_(static_cast<float*>(tensor.data)) {
  if (tensor.dtype == DType::f32) return;
  // A copy that is read is written whole by the widening first; an
  // output's starts zeroed.
  wide_ = device::Buffer(queue, static_cast<std::size_t>(tensor.count) * sizeof(float),
                         role == Role::output ? device::Buffer::Contents::zeroed : device::Buffer::Contents::unset);
  data_ = static_cast<float*>(wide_.data());
  if (role != Role::output) queue.cast(DType::f32, data_, tensor.dtype, tensor.data, tensor.count);
}

void Float32Copy::round_back() {
  if (tensor_.dtype == DType::f32 || role_ == Role::input) return;
  queue_.cast(tensor_.dtype, tensor_.data, DType::f32, data_, tensor_.count);
}

}  // namespace dtrain::parallel::cp
