// dtbench tp: what tensor parallelism costs and saves on a transformer MLP
// block (column-parallel linear, GELU, row-parallel linear), forward and
// backward: the step over the job's ranks against the whole block on one
// rank, the rank's compute alone, its collectives alone, and the GFLOP/s.
#pragma once

namespace dtbench {

// argv[0] is "tp". Returns the process exit status; bad options exit with 2.
int run_tp(int argc, char** argv);

}  // namespace dtbench
