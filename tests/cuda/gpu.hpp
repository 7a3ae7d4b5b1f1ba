// Helpers of the GPU tests: skipping with a message where the machine lacks
// the devices a test needs, and device buffers filled from and read into
// host vectors.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "device/cuda/error.hpp"
#include "device/cuda/runtime.hpp"
#include "device/probe.hpp"

namespace dtrain::test {

inline std::string missing_devices(int wanted) {
  const int have = device::cuda_device_count();
  std::string text = "needs " + std::to_string(wanted) + (wanted == 1 ? " CUDA device" : " CUDA devices") +
                     "; this machine has " + std::to_string(have);
  if (have == 0) text += " (" + device::cuda_unavailable_reason() + ")";
  return text;
}

// Skips the test unless `n` CUDA devices are usable.
#define DT_REQUIRE_GPUS(n)                                                                    \
  do {                                                                                        \
    if (::dtrain::device::cuda_device_count() < (n)) GTEST_SKIP() << missing_devices(n); \
  } while (0)

// Device memory holding a copy of `values`.
template <typename T>
device::cuda::DeviceBuffer to_device(const std::vector<T>& values, int device = 0) {
  device::cuda::DeviceBuffer buffer(device, values.size() * sizeof(T));
  if (!values.empty()) {
    device::cuda::check(cudaMemcpy(buffer.data(), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice),
                        "cudaMemcpy to the device");
  }
  return buffer;
}

template <typename T>
std::vector<T> to_host(const void* data, std::size_t count) {
  std::vector<T> values(count);
  if (count > 0) {
    device::cuda::check(cudaMemcpy(values.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost),
                        "cudaMemcpy to the host");
  }
  return values;
}

inline void synchronize() { device::cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

}  // namespace dtrain::test
