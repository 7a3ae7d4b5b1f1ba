#pragma once

namespace dtbench {

// `dtbench pipeline [options]`: argv[0] is "pipeline".
int run_pipeline(int argc, char** argv);

}  // namespace dtbench
