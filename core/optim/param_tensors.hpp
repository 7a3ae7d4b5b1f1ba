// Checking the caller's parameter and gradient tensors before an optimizer
// borrows them.
#pragma once

#include <cstddef>
#include <vector>

#include <dlpack/dlpack.h>

#include "base/tensor.hpp"

namespace dtrain::optim {

struct ParamTensor {
  TensorView param;
  TensorView grad;
};

// Views of params[i] and grads[i], i < n. Throws DT_ERR_INVALID_ARGUMENT,
// naming the tensor, unless: both arrays are non-NULL and n > 0; every tensor
// passes check_tensor with `cuda` (which refuses kDLCUDA with
// DT_ERR_UNSUPPORTED where there is no device); every param is f32, f16 or
// bf16; each grad has its param's dtype, shape and device; every tensor is on
// params[0]'s device (host memory counts as one device: one optimizer runs
// its kernels in one place); CUDA data is aligned to its element (the kernels
// load whole elements); and no two tensors share a byte (the kernels assume
// they do not).
std::vector<ParamTensor> check_param_tensors(const DLTensor* params, const DLTensor* grads, std::size_t n,
                                             const CudaDevices& cuda);

}  // namespace dtrain::optim
