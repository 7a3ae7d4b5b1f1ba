// Buckets on a CUDA device (see bucket_device.hpp); defined in CUDA builds only.
#pragma once

#include <memory>
#include <span>

#include "parallel/ddp/bucket_device.hpp"

namespace dtrain::parallel::ddp {

// Buckets in the memory of the CUDA device `gradients` are on, ordered after
// the trainer's `stream` (NULL: the legacy default stream). Refuses, naming
// it, a gradient labelled kDLCUDA whose data is not that device's memory
// (DT_ERR_INVALID_ARGUMENT), and f64 gradients that `compression` would
// have the kernels narrow, which they cannot (DT_ERR_UNSUPPORTED).
std::unique_ptr<BucketDevice> make_cuda_buckets(std::span<const TensorView> gradients, Compression compression,
                                                void* stream);

}  // namespace dtrain::parallel::ddp
