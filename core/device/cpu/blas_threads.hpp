// How many threads OpenBLAS may use. A rank is one process among several on a
// machine, each with its own cores in mind, so by default OpenBLAS runs on the
// calling thread alone (1 thread) instead of spreading every product over all
// cores and fighting the other ranks for them. DTRAIN_BLAS_THREADS=N (1..1024)
// gives each rank N threads, for a rank that owns several cores.
#pragma once

namespace dtrain::device::cpu {

// Sets OpenBLAS's thread count from DTRAIN_BLAS_THREADS (default 1) on the
// first call in the process; later calls do nothing. Every CPU GEMM calls it
// first. Throws DT_ERR_INVALID_ARGUMENT for a value that is not an integer in
// range, naming the variable.
void configure_blas_threads();

// The thread count configure_blas_threads() chose.
int blas_threads();

}  // namespace dtrain::device::cpu
