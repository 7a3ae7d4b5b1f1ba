// Test helper of the cp tests' GPU builds (DTRAIN_TEST_ON_GPU): skips every
// test of the program, saying why, where there is no CUDA device. gtest
// reports such a program as passing; CTest reads the reason instead
// (tests/cp/CMakeLists.txt).
#pragma once

#ifdef DTRAIN_TEST_ON_GPU
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

namespace dtrain::testing {

class RequireDevice : public ::testing::Environment {
 public:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      GTEST_SKIP() << "needs a CUDA device; this machine has none";
    }
  }
};
inline ::testing::Environment* const kRequireDevice = ::testing::AddGlobalTestEnvironment(new RequireDevice);

}  // namespace dtrain::testing
#endif
