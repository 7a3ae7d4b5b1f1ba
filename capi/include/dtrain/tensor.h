/** @file
 * libdtrain — tensors at the boundary.
 *
 * libdtrain works on buffers the caller owns, described by DLPack DLTensors.
 * Every tensor passed in is borrowed for the duration of the call (or, for a
 * non-blocking operation, until its request completes).
 *
 * Accepted tensors:
 *   - contiguous, row-major: strides NULL or compact;
 *   - devices kDLCPU and kDLCUDAHost (and kDLCUDA where CUDA is available;
 *     otherwise refused with DT_ERR_UNSUPPORTED);
 *   - dtypes float32, float64, float16, bfloat16, int32, int64, int8, uint8,
 *     with lanes = 1;
 *   - data may be NULL only when the tensor has no elements.
 */
#ifndef DTRAIN_TENSOR_H
#define DTRAIN_TENSOR_H

#include <dlpack/dlpack.h>

#include "dtrain/common.h"
#include "dtrain/status.h"

DT_BEGIN_DECLS

/**
 * Checks that `tensor` is one libdtrain accepts and returns its element count
 * in `*count` (may be NULL). DT_ERR_INVALID_ARGUMENT for a malformed tensor,
 * DT_ERR_UNSUPPORTED for a device this machine cannot use; dt_error_last()
 * says which property is wrong.
 */
DT_API dt_status dt_tensor_check(const DLTensor *tensor, int64_t *count);

DT_END_DECLS

#endif /* DTRAIN_TENSOR_H */
