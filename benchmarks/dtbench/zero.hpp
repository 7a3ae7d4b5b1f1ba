#pragma once

namespace dtbench {

// `dtbench zero [options]`: argv[0] is "zero".
int run_zero(int argc, char** argv);

}  // namespace dtbench
