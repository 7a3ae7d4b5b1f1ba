#pragma once

namespace dtbench {

// `dtbench collectives [options]`: argv[0] is "collectives".
int run_collectives(int argc, char** argv);

}  // namespace dtbench
