// dtbench halfconv: f16 <-> f32 array conversions, the portable loops against
// F16C.
#pragma once

namespace dtbench {

// argv[0] is "halfconv". Returns the process exit status: 0, also where the
// CPU lacks F16C (only the portable rows are measured, and it says so), 1
// when the results cannot be written; bad options exit with 2.
int run_halfconv(int argc, char** argv);

}  // namespace dtbench
