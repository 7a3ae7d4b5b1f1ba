// dtbench moe: what an MoE layer's token exchange costs (dt_moe_dispatch and
// dt_moe_combine over the world as the ep communicator) against raw
// dt_alltoallv calls moving the same bytes.
#pragma once

namespace dtbench {

// argv[0] is "moe". Returns the process exit status; bad options exit with 2.
int run_moe(int argc, char** argv);

}  // namespace dtbench
