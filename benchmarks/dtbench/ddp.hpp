#pragma once

namespace dtbench {

// `dtbench ddp [options]`: argv[0] is "ddp".
int run_ddp(int argc, char** argv);

}  // namespace dtbench
