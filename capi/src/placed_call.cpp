#include "placed_call.hpp"

#include <string>

#include "base/error.hpp"
#include "arguments.hpp"

namespace dtrain::capi {

TensorView PlacedCall::view(const DLTensor* tensor, const char* name) {
  TensorView view = view_of(tensor, name);
  check_device_alignment(view, name);
  if (!first_) {
    if (comm_ != nullptr) comm_->check_placement(view, name);
    first_ = view;
    first_name_ = name;
    queue_ = &device::thread_queue(view);
    queue_->wait_for(nullptr);
  } else if (!same_place(view, *first_)) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + " is " + place_name(view) + " but " + first_name_ + " is " +
                                       place_name(*first_) + "; a call's tensors must be in one place");
  }
  view.stream = queue_->stream();
  return view;
}

device::Queue& PlacedCall::queue() {
  if (queue_ == nullptr) queue_ = &device::thread_queue(TensorView{});
  return *queue_;
}

PlacedCall::~PlacedCall() {
  try {
    finish();
  } catch (...) {
    // The call is already failing with its own error.
  }
}

void PlacedCall::finish() {
  if (queue_ != nullptr) queue_->synchronize();
}

}  // namespace dtrain::capi
