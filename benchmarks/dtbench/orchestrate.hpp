#pragma once

#include "bench.h"

namespace dtbench {

// `dtbench collectives --vs-mpi`: runs the sweep under `dtrun -n nproc`, then
// the MPI peer under `mpirun -np nproc`, `rounds` times in turn, then compares
// the two sides, each the best of its rounds for every operation and size.
int orchestrate(const dtb_options& options, int nproc, int rounds);

}  // namespace dtbench
