// How the contract maps onto NCCL and the CUDA runtime: dtypes, operators,
// colors, and their errors as dt_status values. Pure; no GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "comm/backends/nccl/mapping.hpp"
#include "comm/backends/nccl/nccl_api.hpp"
#include "device/cuda/error.hpp"
#include "dtrain/common.h"

namespace dtrain::test {
namespace {

namespace nccl = comm::nccl;
using comm::ReduceOp;

TEST(NcclMapping, EveryDtype) {
  EXPECT_EQ(nccl::to_nccl(DType::f32), ncclFloat32);
  EXPECT_EQ(nccl::to_nccl(DType::f64), ncclFloat64);
  EXPECT_EQ(nccl::to_nccl(DType::f16), ncclFloat16);
  EXPECT_EQ(nccl::to_nccl(DType::bf16), ncclBfloat16);
  EXPECT_EQ(nccl::to_nccl(DType::i32), ncclInt32);
  EXPECT_EQ(nccl::to_nccl(DType::i64), ncclInt64);
  EXPECT_EQ(nccl::to_nccl(DType::i8), ncclInt8);
  EXPECT_EQ(nccl::to_nccl(DType::u8), ncclUint8);
}

TEST(NcclMapping, EveryReduction) {
  EXPECT_EQ(nccl::to_nccl(ReduceOp::sum), ncclSum);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::avg), ncclAvg);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::max), ncclMax);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::min), ncclMin);
  EXPECT_EQ(nccl::to_nccl(ReduceOp::prod), ncclProd);
}

TEST(NcclMapping, Colors) {
  EXPECT_EQ(nccl::to_nccl_color(DT_UNDEF), NCCL_SPLIT_NOCOLOR);
  EXPECT_EQ(nccl::to_nccl_color(0), 0);
  EXPECT_EQ(nccl::to_nccl_color(7), 7);
}

TEST(NcclMapping, ResultsAsStatuses) {
  EXPECT_EQ(nccl::status_of(ncclSuccess), DT_OK);
  EXPECT_EQ(nccl::status_of(ncclInProgress), DT_INPROGRESS);
  EXPECT_EQ(nccl::status_of(ncclInvalidArgument), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(nccl::status_of(ncclInvalidUsage), DT_ERR_INVALID_USAGE);
  // What NCCL reports asynchronously leaves its communicator unusable:
  // statuses that break a dt_comm.
  EXPECT_EQ(nccl::status_of(ncclRemoteError), DT_ERR_REMOTE);
  EXPECT_EQ(nccl::status_of(ncclSystemError), DT_ERR_TRANSPORT);
  EXPECT_EQ(nccl::status_of(ncclUnhandledCudaError), DT_ERR_TRANSPORT);
  EXPECT_EQ(nccl::status_of(ncclInternalError), DT_ERR_INTERNAL);
  EXPECT_EQ(nccl::status_of(static_cast<ncclResult_t>(42)), DT_ERR_INTERNAL);
}

TEST(NcclMapping, MessagesCarryNcclsText) {
  EXPECT_EQ(nccl::describe("ncclAllReduce", ncclRemoteError, "remote process exited or there was a network error",
                           "NET/Socket : peer 10.0.0.2<4242> closed the connection"),
            "ncclAllReduce: ncclRemoteError (remote process exited or there was a network error): "
            "NET/Socket : peer 10.0.0.2<4242> closed the connection");
  EXPECT_EQ(nccl::describe("ncclSend", ncclInvalidArgument, nullptr, ""), "ncclSend: ncclInvalidArgument");
  EXPECT_EQ(nccl::describe("x", static_cast<ncclResult_t>(9), "", nullptr), "x: NCCL result 9");
  EXPECT_EQ(nccl::version_text(22809), "2.28.9");
  EXPECT_EQ(nccl::version_text(nccl::kMinimumVersion), "2.18.0");
}

TEST(NcclLibrary, LoadsOrSaysWhy) {
  std::string why;
  const nccl::Api* api = nccl::api(&why);
  if (api == nullptr) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << "NCCL is not usable here: " << why;
  }
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_GE(api->version, nccl::kMinimumVersion);
  EXPECT_NE(api->all_reduce, nullptr);
  EXPECT_NE(api->comm_abort, nullptr);
  EXPECT_STRNE(api->get_error_string(ncclRemoteError), "");
}

TEST(CudaErrors, AsStatuses) {
  namespace cuda = device::cuda;
  EXPECT_EQ(cuda::status_of(cudaSuccess), DT_OK);
  EXPECT_EQ(cuda::status_of(cudaErrorNotReady), DT_INPROGRESS);
  EXPECT_EQ(cuda::status_of(cudaErrorMemoryAllocation), DT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(cuda::status_of(cudaErrorNoDevice), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(cuda::status_of(cudaErrorInsufficientDriver), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(cuda::status_of(cudaErrorNoKernelImageForDevice), DT_ERR_UNSUPPORTED);
  EXPECT_EQ(cuda::status_of(cudaErrorInvalidDevicePointer), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cuda::status_of(cudaErrorIllegalAddress), DT_ERR_INTERNAL);
  try {
    cuda::check(cudaErrorMemoryAllocation, "cudaMalloc of 8 bytes");
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(std::string(e.what()), "cudaMalloc of 8 bytes: cudaErrorMemoryAllocation (out of memory)");
  }
}

}  // namespace
}  // namespace dtrain::test
