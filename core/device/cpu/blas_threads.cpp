#include "device/cpu/blas_threads.hpp"

#include <cblas.h>

#include "base/env.hpp"

namespace dtrain::device::cpu {

namespace {

int configured_threads() {
  // A magic static: read, checked and applied once, even with several
  // threads calling; a bad value throws again on every call.
  static const int threads = [] {
    const int wanted = env::get_int("DTRAIN_BLAS_THREADS", 1, 1024).value_or(1);
    openblas_set_num_threads(wanted);
    return wanted;
  }();
  return threads;
}

}  // namespace

void configure_blas_threads() { configured_threads(); }

int blas_threads() { return configured_threads(); }

}  // namespace dtrain::device::cpu
