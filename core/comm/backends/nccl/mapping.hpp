// How libdtrain's contract maps onto NCCL's: dtypes, reduction operators,
// colors, and NCCL's results as dt_status values. Pure functions; the unit
// tests check them without a GPU.
#pragma once

#include <optional>
#include <string>

#include <nccl.h>

#include "base/dtype.hpp"
#include "comm/reduce_op.hpp"
#include "dtrain/status.h"

namespace dtrain::comm::nccl {

// Every dtype libdtrain accepts has an NCCL type (bf16 is ncclBfloat16).
ncclDataType_t to_nccl(DType dtype) noexcept;

// DT_AVG is ncclAvg (NCCL divides by the rank count itself).
ncclRedOp_t to_nccl(ReduceOp op) noexcept;

// dt_comm_split's color: DT_UNDEF (leave this rank out) is NCCL_SPLIT_NOCOLOR;
// other colors are >= 0 and the same in NCCL.
int to_nccl_color(int color) noexcept;

// The dt_status for an NCCL result. Errors NCCL reports asynchronously
// (ncclRemoteError, ncclSystemError, ncclUnhandledCudaError) leave the NCCL
// communicator unusable, so they map to statuses that break a dt_comm:
// DT_ERR_REMOTE, DT_ERR_TRANSPORT, DT_ERR_TRANSPORT. ncclInProgress is
// DT_INPROGRESS.
dt_status status_of(ncclResult_t result) noexcept;

// "ncclAllReduce: ncclRemoteError (remote process exited or there was a
// network error): <NCCL's last error text>" — `last_error` may be NULL or
// empty, and is left out when it says nothing more.
std::string describe(const char* call, ncclResult_t result, const char* error_string, const char* last_error);

// "2.28.9" for NCCL's version code (major * 10000 + minor * 100 + patch).
std::string version_text(int code);

}  // namespace dtrain::comm::nccl
