// dtbench predict: what the planner's step-time model (step_model.hpp) says
// dtbench ddp, zero, tp and pipeline take on a cluster file, beside what
// their results files measured.
#pragma once

namespace dtbench {

// argv[0] is "predict". Returns the process exit status: 0 after printing
// the table, 1 when a file cannot be read or written; bad options exit 2.
int run_predict(int argc, char** argv);

}  // namespace dtbench
