#pragma once

#include <string>

#include "bench.h"

namespace dtbench {

// `dtbench collectives --vs-mpi`: runs the sweep under `dtrun -n nproc`, then
// the MPI peer under `mpirun -np nproc`, `rounds` times in turn, then compares
// the two sides, each the best of its rounds for every operation and size,
// and the ratio of the two within each round. Each run's results go to
// `results_dir` when it is not empty (kept), else to a temporary directory.
int orchestrate(const dtb_options& options, int nproc, int rounds, const std::string& results_dir);

}  // namespace dtbench
