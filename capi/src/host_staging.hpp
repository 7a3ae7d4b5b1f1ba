// Host copies of a placed call's tensors, for calls that compute on the host
// wherever their tensors are: MoE's routing and losses, whose [T, E] and
// [T, k] matrices are small and whose choices the plan needs on the host
// anyway (as the token counts of any all-to-all dispatcher do). A tensor in
// host memory is used in place; a CUDA tensor is copied to host memory
// when it is staged, and an output's copy goes back in finish().
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/tensor_list.hpp"
#include "placed_call.hpp"

namespace dtrain::capi {

class HostStaging {
 public:
  explicit HostStaging(PlacedCall& call) : call_(call) {}
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // `tensor`, placed through the call (PlacedCall::view), in host memory
  // with its contents. A device tensor overlapping one staged before, where
  // either is an output, is DT_ERR_INVALID_ARGUMENT ("<name> overlaps
  // <other>"), as the host copies would hide it. input() leaves the caller's tensor as it is; output()
  // (an output, or a tensor the call adds to) is copied back by finish().
  CheckedTensor input(const DLTensor* tensor, const char* name) { return stage(tensor, name, false); }
  CheckedTensor output(const DLTensor* tensor, const char* name) { return stage(tensor, name, true); }

  // Copies the outputs back to where they came from and waits for the
  // copies.
  void finish();

 private:
  struct Copy {
    TensorView placed;
    const char* name = nullptr;
    std::vector<std::byte> host;
    bool back = false;
  };

  CheckedTensor stage(const DLTensor* tensor, const char* name, bool back);

  PlacedCall& call_;
  std::deque<Copy> copies_;  // a deque: the host memory of each stays where it is
};

}  // namespace dtrain::capi
