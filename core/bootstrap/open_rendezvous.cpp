#include "bootstrap/open_rendezvous.hpp"

#include "base/env.hpp"
#include "base/error.hpp"
#include "bootstrap/host_port.hpp"
#include "bootstrap/oob_rendezvous.hpp"
#include "bootstrap/store_rendezvous.hpp"

namespace dtrain::bootstrap {

std::unique_ptr<Rendezvous> open_rendezvous(const dt_comm_options& opts, const LaunchConfig& launch,
                                            std::chrono::milliseconds timeout, const std::string& scope) {
  if (opts.oob_allgather != nullptr) {
    return std::make_unique<OobRendezvous>(launch.rank, launch.world_size, opts.oob_allgather, opts.oob_user);
  }
  if (!launch.store) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "a world of " + std::to_string(launch.world_size) +
              " ranks needs a rendezvous: launch with dtrun, set DTRAIN_STORE (or MASTER_ADDR and "
              "MASTER_PORT), pass options.store, or supply options.oob_allgather");
  }
  StoreRendezvous::Options store;
  store.rank = launch.rank;
  store.size = launch.world_size;
  store.store = parse_host_port(*launch.store, opts.store ? "options.store" : "the store address");
  // A missing token is still sent (as empty) so that a store expecting one
  // refuses it with DT_ERR_AUTH, naming the problem.
  store.token = opts.auth_token ? opts.auth_token : env::get("DTRAIN_AUTH_TOKEN").value_or("");
  store.timeout = timeout;
  store.rank0_hosts = launch.rank0_hosts_store;
  store.prefix = "dtrain/" + scope;
  if (store.rank0_hosts && store.token.empty()) {
    raise(DT_ERR_INVALID_ARGUMENT, "rank 0 runs the store at " + store.store.to_string() +
                                       " and needs the job's secret: set DTRAIN_AUTH_TOKEN (the same on "
                                       "every rank) or options.auth_token");
  }
  // Enough connections for every rank and a few tools beside them.
  store.limits.max_connections = std::max<std::size_t>(store.limits.max_connections, launch.world_size + 16);
  return StoreRendezvous::open(store);
}

}  // namespace dtrain::bootstrap
