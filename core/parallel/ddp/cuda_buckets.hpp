// Buckets on a CUDA device (see bucket_device.hpp); defined in CUDA builds only.
#pragma once

#include <memory>
#include <span>

#include "parallel/ddp/bucket_device.hpp"

namespace dtrain::parallel::ddp {

// Buckets in the memory of the CUDA device `gradients` are on, ordered after
// the trainer's `stream` (NULL: the legacy default stream). Refuses, naming
// it, a gradient labelled kDLCUDA whose data is not that device's memory.
std::unique_ptr<BucketDevice> make_cuda_buckets(std::span<const TensorView> gradients, void* stream);

}  // namespace dtrain::parallel::ddp
