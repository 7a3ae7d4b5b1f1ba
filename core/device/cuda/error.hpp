// CUDA runtime errors as dtrain errors: every CUDA call's result goes through
// check(), which throws a dtrain::Error with the matching dt_status and a
// message naming the call and CUDA's own name and text for the error.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "base/error.hpp"

namespace dtrain::device::cuda {

// The dt_status for a cudaError_t: out of memory for allocation failures,
// DT_ERR_UNSUPPORTED when there is no driver or device, DT_ERR_INVALID_ARGUMENT
// for invalid values, devices and pointers, DT_ERR_INTERNAL for the rest
// (launch failures, illegal addresses and other faults of the device).
dt_status status_of(cudaError_t error) noexcept;

// "cudaErrorMemoryAllocation (out of memory)".
std::string describe(cudaError_t error);

// Throws Error(status_of(error), what + ": " + describe(error)) unless error
// is cudaSuccess. Clears the runtime's non-sticky last error first, so that a
// later, unrelated check does not report it again.
void check(cudaError_t error, const std::string& what);

// check() for the launch that just happened (cudaGetLastError).
void check_launch(const char* kernel);

}  // namespace dtrain::device::cuda
