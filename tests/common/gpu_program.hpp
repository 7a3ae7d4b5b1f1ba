// Test helper for the gpu-labelled programs that drive the C API on CUDA
// memory of their own (the CUDA runtime linked in): a runtime check that
// ends the program, bf16 conversions for their data, and a main() that
// skips (exit 77) without a device.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime_api.h>

#include "dtrain.h"

namespace dtrain::testing {

// Ends the program, naming `what`, when a CUDA runtime call failed.
inline void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}

inline std::uint16_t to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even (no NaNs here)
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float from_bf16(std::uint16_t half) {
  const std::uint32_t bits = static_cast<std::uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

// The tests, or exit code 77 (CTest: skipped) with a message where the
// machine has no CUDA device.
inline int gpu_test_main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", dt_build_info());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

}  // namespace dtrain::testing
