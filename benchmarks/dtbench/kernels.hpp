// dtbench kernels: the bandwidth of libdtrain's CUDA kernels against a
// device-to-device copy measured in the same run.
#pragma once

namespace dtbench {

// argv[0] is "kernels". Returns the process exit status: 0 also when there is
// no CUDA device (it prints a "skipped: ..." line saying why), 2 for bad
// options, 1 when the device fails.
int run_kernels(int argc, char** argv);

}  // namespace dtbench
