// Creating a world communicator from options: resolving the launch
// configuration, choosing the backend, and rendezvous with the peers.
#pragma once

#include <memory>

#include "comm/communicator.hpp"

namespace dtrain::comm {

// The defaults behind DT_COMM_OPTIONS_INIT.
dt_comm_options default_comm_options();

// `opts` may be any released version, or NULL for all from the environment.
std::shared_ptr<Communicator> create_communicator(const dt_comm_options* opts);

// Fills `opts` with the defaults of `version` (only that version's fields).
void init_comm_options(dt_comm_options* opts, unsigned version);

}  // namespace dtrain::comm
