#include "comm/backends/nccl/mapping.hpp"

#include "dtrain/common.h"

namespace dtrain::comm::nccl {

ncclDataType_t to_nccl(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return ncclFloat32;
    case DType::f64: return ncclFloat64;
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::i32: return ncclInt32;
    case DType::i64: return ncclInt64;
    case DType::i8: return ncclInt8;
    case DType::u8: return ncclUint8;
  }
  return ncclNumTypes;  // unreachable for a valid DType
}

ncclRedOp_t to_nccl(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::avg: return ncclAvg;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::prod: return ncclProd;
  }
  return ncclNumOps;  // unreachable for a valid ReduceOp
}

int to_nccl_color(int color) noexcept { return color == DT_UNDEF ? NCCL_SPLIT_NOCOLOR : color; }

dt_status status_of(ncclResult_t result) noexcept {
  switch (result) {
    case ncclSuccess: return DT_OK;
    case ncclInProgress: return DT_INPROGRESS;
    case ncclInvalidArgument: return DT_ERR_INVALID_ARGUMENT;
    case ncclInvalidUsage: return DT_ERR_INVALID_USAGE;
    case ncclRemoteError: return DT_ERR_REMOTE;
    case ncclSystemError: return DT_ERR_TRANSPORT;
    case ncclUnhandledCudaError: return DT_ERR_TRANSPORT;
    case ncclInternalError: return DT_ERR_INTERNAL;
    default: return DT_ERR_INTERNAL;
  }
}

std::string describe(const char* call, ncclResult_t result, const char* error_string, const char* last_error) {
  static const char* const names[] = {"ncclSuccess",      "ncclUnhandledCudaError", "ncclSystemError",
                                      "ncclInternalError", "ncclInvalidArgument",   "ncclInvalidUsage",
                                      "ncclRemoteError",  "ncclInProgress"};
  const int index = static_cast<int>(result);
  std::string text = std::string(call) + ": " +
                     (index >= 0 && index < 8 ? names[index] : "NCCL result " + std::to_string(index));
  if (error_string != nullptr && *error_string != '\0') text += std::string(" (") + error_string + ")";
  if (last_error != nullptr && *last_error != '\0') text += std::string(": ") + last_error;
  return text;
}

std::string version_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

}  // namespace dtrain::comm::nccl
