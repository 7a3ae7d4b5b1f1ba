// Buckets on a CUDA device (see bucket_device.hpp); defined in CUDA builds only.
#pragma once

#include <memory>
#include <span>

#include "parallel/ddp/bucket_device.hpp"

namespace dtrain::parallel::ddp {

// Buckets in the memory of the CUDA device `gradients` are on, ordered after
// the trainer's `stream` (NULL: the legacy default stream). The gradients'
// memory has been checked against that device already (the communicator's
// check_placement()). Refuses, naming it, an f64 gradient that
// `compression` would have the kernels narrow, which they cannot
// (DT_ERR_UNSUPPORTED).
std::unique_ptr<BucketDevice> make_cuda_buckets(std::span<const TensorView> gradients, Compression compression,
                                                void* stream);

}  // namespace dtrain::parallel::ddp
