// dtbench gemm: the device layer's GEMM (core/device/gemm.hpp) against
// OpenBLAS's cblas_sgemm called directly, and against the CPU's peak.
#pragma once

namespace dtbench {

// argv[0] is "gemm". Returns the process exit status: 0 after printing the
// table (whatever the figures), 1 when the results cannot be written; bad
// options exit with 2.
int run_gemm(int argc, char** argv);

}  // namespace dtbench
