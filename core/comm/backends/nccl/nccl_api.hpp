// NCCL as a table of functions loaded at run time (dlopen of libnccl.so.2),
// so that libdtrain links no NCCL (ldd shows none) and runs where NCCL is
// absent: the NCCL backend is then simply unavailable. Only nccl.h's types
// are used at build time.
#pragma once

#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace dtrain::comm::nccl {

// The oldest NCCL with everything the backend uses (ncclCommSplit with
// nonblocking communicators, ncclAvg, ncclBfloat16, ncclGetLastError).
inline constexpr int kMinimumVersion = 21800;  // 2.18.0

struct Api {
  int version = 0;  // NCCL_VERSION_CODE of the loaded library

  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_rank_config)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*) = nullptr;
  ncclResult_t (*comm_split)(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t*) = nullptr;
  ncclResult_t (*comm_count)(const ncclComm_t, int*) = nullptr;
  ncclResult_t (*comm_user_rank)(const ncclComm_t, int*) = nullptr;
  const char* (*get_error_string)(ncclResult_t) = nullptr;
  const char* (*get_last_error)(ncclComm_t) = nullptr;

  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                             cudaStream_t) = nullptr;
  ncclResult_t (*reduce_scatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                 cudaStream_t) = nullptr;
  ncclResult_t (*all_gather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                         cudaStream_t) = nullptr;
  ncclResult_t (*send)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*recv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
};

// The loaded table (loaded once per process, never unloaded), or nullptr
// when NCCL cannot be used; then `why` (when given) says why: library not
// found, a function missing, or a version older than kMinimumVersion.
const Api* api(std::string* why = nullptr);

}  // namespace dtrain::comm::nccl
