// dtbench cp: what context parallelism costs and saves: ring attention
// against the same kernel over the whole sequence on one rank, the share of
// the key/value transfers hidden behind compute, and how evenly the causal
// work falls on the ranks in the contiguous and zigzag layouts.
#pragma once

namespace dtbench {

// argv[0] is "cp". Returns the process exit status; bad options exit with 2.
int run_cp(int argc, char** argv);

}  // namespace dtbench
