// Choosing how a new communicator's ranks find each other: the caller's
// out-of-band allgather when there is one, otherwise the rendezvous store
// (run by a launcher, or by rank 0 for torchrun-style MASTER_ADDR/PORT).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "bootstrap/launch_env.hpp"
#include "bootstrap/rendezvous.hpp"
#include "dtrain/comm.h"

namespace dtrain::bootstrap {

// `scope` keeps the keys of this communicator's exchanges apart from those
// of others created in the same job ("comm3/"). Throws
// DT_ERR_INVALID_ARGUMENT when the job names no store and no out-of-band
// allgather, DT_ERR_AUTH when the store refuses the token, DT_ERR_TIMEOUT
// when the store cannot be reached in time.
std::unique_ptr<Rendezvous> open_rendezvous(const dt_comm_options& opts, const LaunchConfig& launch,
                                            std::chrono::milliseconds timeout, const std::string& scope);

}  // namespace dtrain::bootstrap
