// Where a process stands in its job: rank, world size, local rank and store,
// from explicit options first and then from whichever launcher's variables
// are present: libdtrain's own (DTRAIN_*), torchrun, OpenMPI, PMI, Slurm.
#pragma once

#include <optional>
#include <string>

#include "dtrain/comm.h"

namespace dtrain::bootstrap {

struct LaunchConfig {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::optional<std::string> store;  // "host:port"
  bool rank0_hosts_store = false;    // torchrun style (MASTER_ADDR/PORT): rank 0 runs the store there
  std::string source;                // which variables supplied rank and size, for messages
};

// Resolves `opts` (already upgraded to the current version) against the
// environment. With no launcher variables at all the process is a world of
// one. Missing or inconsistent values throw DT_ERR_INVALID_ARGUMENT naming the
// variable or option.
LaunchConfig resolve_launch(const dt_comm_options& opts);

}  // namespace dtrain::bootstrap
