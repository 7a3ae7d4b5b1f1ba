#pragma once

#include "bench.h"

namespace dtbench {

// `dtbench collectives --vs-mpi`: runs the sweep under `dtrun -n nproc`, the
// MPI peer under `mpirun -np nproc`, then `dtbench compare` on the two.
int orchestrate(const dtb_options& options, int nproc);

}  // namespace dtbench
