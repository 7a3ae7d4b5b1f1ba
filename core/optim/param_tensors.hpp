// Checking the caller's parameter and gradient tensors, as the C API parsed
// them, before an optimizer borrows them.
#pragma once

#include <vector>

#include "base/tensor_list.hpp"

namespace dtrain::optim {

struct ParamTensor {
  TensorView param;
  TensorView grad;
};

// The pairs (params[i], grads[i]); both lists have the same length. Throws
// DT_ERR_INVALID_ARGUMENT, naming the tensor, unless: there is at least one
// pair; every param is f32, f16 or bf16; each grad has its param's dtype,
// shape and device; every tensor is on params[0]'s device (host memory counts
// as one device: one optimizer runs its kernels in one place); CUDA data is
// aligned to its element (the kernels load whole elements); and no two
// tensors share a byte (the kernels assume they do not).
std::vector<ParamTensor> check_param_tensors(const std::vector<CheckedTensor>& params,
                                             const std::vector<CheckedTensor>& grads);

}  // namespace dtrain::optim
