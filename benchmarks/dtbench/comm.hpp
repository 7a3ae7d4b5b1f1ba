// A libdtrain communicator as the benchmark uses it, through the public C API
// only. Every failure ends the program: numbers measured after a failed
// collective would mean nothing.
#pragma once

#include <dtrain.h>

#include <string>

#include "bench.h"

namespace dtbench {

class Comm {
 public:
  // The world comes from the environment: a world of one when nothing is set,
  // N ranks under `dtrun -n N`.
  Comm();
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // One call of `op` with the buffers `layout` describes and, for the uneven
  // operations, the per-rank counts dtb_counts gives.
  void run(dtb_op op, const dtb_layout& layout, dtb_dtype dtype, void* send, void* recv,
           const int64_t* send_counts, const int64_t* recv_counts);

  void barrier();

  // The maximum of `value` over ranks.
  double max(double value);

  // Sums `values[0..n)` over ranks, in place.
  void sum(double* values, int64_t n);

  // Ends the program as a failed collective does when `status` is not DT_OK.
  void check(const char* what, dt_status status) {
    if (status != DT_OK) fail(what, status);
  }

  // For the benchmarks that build on the communicator (dtbench ddp).
  dt_comm* handle() { return comm_; }

  // Every rank meets here. A rank waiting while rank 0 works alone passes
  // `quietly`: it sleeps between polls instead of taking a core rank 0 needs.
  void meet(bool quietly);

  // Tears the communicator down and exits with `code`.
  [[noreturn]] void exit(int code);

 private:
  [[noreturn]] void fail(const char* what, dt_status status);

  dt_comm* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace dtbench
