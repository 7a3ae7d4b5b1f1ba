// dtbench checks: what comparing each collective's call across the ranks
// (DTRAIN_CHECK_COLLECTIVES) costs a small blocking allreduce.
#pragma once

namespace dtbench {

// argv[0] is "checks". Returns the process exit status; bad options exit with 2.
int run_checks(int argc, char** argv);

}  // namespace dtbench
