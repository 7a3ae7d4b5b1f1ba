// The rank-process role of the process fault tests (process_fault_test.cpp).
#pragma once

namespace dtrain::test {

// Runs one rank of a scenario described by DTRAIN_UCX_TEST_* variables;
// returns the process's exit status.
int run_rank_process();

}  // namespace dtrain::test
