// The benchmarks' --device cuda: host tensors moved to this rank's CUDA
// device (its local rank modulo the devices there are), which their
// DLTensors then describe, freed with the DeviceCopies. Without CUDA in the
// build there are no devices, and the subcommands refuse the option.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace dtbench {

// The CUDA devices this process sees (0 in a build without CUDA).
int cuda_devices();

// Returns once the work queued on this rank's device has run (nothing
// without CUDA): for timing calls that may return before their work is done.
void cuda_synchronize();

class DeviceCopies {
 public:
  // `tensor` (host memory of `bytes`) becomes a copy of it on the device.
  void move(DLTensor& tensor, std::size_t bytes);

 private:
  std::vector<std::unique_ptr<void, void (*)(void*)>> copies_;
};

}  // namespace dtbench
