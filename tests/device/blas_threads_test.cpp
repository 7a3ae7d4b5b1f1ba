// The OpenBLAS thread count a rank's GEMMs use: 1 unless DTRAIN_BLAS_THREADS
// says otherwise. CTest runs this test twice, with the variable unset and
// set to 2, and each run checks what the library chose and what OpenBLAS was
// told. Host only (the count is the CPU GEMM's).
#include <gtest/gtest.h>

#include <cblas.h>

#include <cstdlib>
#include <string>

#include "device/cpu/blas_threads.hpp"

namespace dtrain::test {
namespace {

TEST(BlasThreads, FollowTheEnvironment) {
  const char* wanted = std::getenv("DTRAIN_BLAS_THREADS");
  const int expected = wanted != nullptr && *wanted != '\0' ? std::stoi(wanted) : 1;
  device::cpu::configure_blas_threads();
  EXPECT_EQ(device::cpu::blas_threads(), expected);
  EXPECT_EQ(openblas_get_num_threads(), expected);
}

}  // namespace
}  // namespace dtrain::test
