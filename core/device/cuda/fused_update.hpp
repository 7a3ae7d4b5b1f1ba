// The CUDA FusedUpdate (device/fused_update.hpp), for the CUDA Queue.
#pragma once

#include <memory>
#include <span>

#include <cuda_runtime_api.h>

#include "device/fused_update.hpp"
#include "device/slot.hpp"

namespace dtrain::device::cuda {

// Over `slots`, whose params, grads, masters and state are in the memory of
// `device` (checked: DT_ERR_INVALID_ARGUMENT naming the tensor otherwise),
// running on `stream`, which must outlive it.
std::unique_ptr<FusedUpdate> make_fused_update(int device, cudaStream_t stream, std::span<const Slot> slots);

}  // namespace dtrain::device::cuda
