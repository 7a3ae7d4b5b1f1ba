#include "bootstrap/launch_env.hpp"

#include <climits>

#include "base/env.hpp"
#include "base/error.hpp"

namespace dtrain::bootstrap {

namespace {

// One launcher's variable names; nullptr where it has none.
struct Launcher {
  const char* name;
  const char* rank;
  const char* size;
  const char* local_rank;
};

constexpr Launcher kLaunchers[] = {
    {"dtrain", "DTRAIN_RANK", "DTRAIN_WORLD_SIZE", "DTRAIN_LOCAL_RANK"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"OpenMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"PMI", "PMI_RANK", "PMI_SIZE", nullptr},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

// DTRAIN_STORE names a store someone runs (dtrun, say); MASTER_ADDR and
// MASTER_PORT, as torchrun sets them, name where rank 0 is to run it.
std::optional<std::string> store_from_env(bool* rank0_hosts) {
  *rank0_hosts = false;
  if (auto store = env::get("DTRAIN_STORE")) return store;
  auto addr = env::get("MASTER_ADDR");
  auto port = env::get("MASTER_PORT");
  if (addr && port) {
    *rank0_hosts = true;
    return *addr + ":" + *port;
  }
  if (addr || port) invalid(std::string(addr ? "MASTER_PORT" : "MASTER_ADDR") + " is not set but " +
                            (addr ? "MASTER_ADDR" : "MASTER_PORT") + " is");
  return std::nullopt;
}

}  // namespace

LaunchConfig resolve_launch(const dt_comm_options& opts) {
  LaunchConfig config;
  const Launcher* launcher = nullptr;
  for (const Launcher& l : kLaunchers) {
    if (env::get(l.rank) || env::get(l.size)) {
      launcher = &l;
      break;
    }
  }

  std::optional<int> env_rank, env_size, env_local;
  if (launcher != nullptr) {
    env_rank = env::get_int(launcher->rank, 0, INT_MAX - 1);
    env_size = env::get_int(launcher->size, 1, INT_MAX - 1);
    if (launcher->local_rank) env_local = env::get_int(launcher->local_rank, 0, INT_MAX - 1);
  }

  if (opts.world_size != DT_UNDEF) {
    if (opts.world_size < 1) invalid("options.world_size = " + std::to_string(opts.world_size) + " is not positive");
    config.world_size = opts.world_size;
    config.source = "options";
  } else if (env_size) {
    config.world_size = *env_size;
    config.source = launcher->size;
  } else if (launcher != nullptr) {
    invalid(std::string(launcher->rank) + " is set but " + launcher->size + " is not");
  }

  if (opts.rank != DT_UNDEF) {
    if (opts.rank < 0) invalid("options.rank = " + std::to_string(opts.rank) + " is negative");
    config.rank = opts.rank;
  } else if (env_rank) {
    config.rank = *env_rank;
  } else if (config.world_size > 1) {
    invalid(launcher ? std::string(launcher->size) + " is set but " + launcher->rank + " is not"
                     : "options.world_size is " + std::to_string(config.world_size) +
                           " but options.rank is unset and no launcher variable gives it");
  }

  if (config.rank >= config.world_size) {
    std::string rank_from = opts.rank != DT_UNDEF ? "options.rank" : launcher->rank;
    std::string size_from = opts.world_size != DT_UNDEF ? "options.world_size" : launcher->size;
    invalid(rank_from + " = " + std::to_string(config.rank) + " is not below " + size_from + " = " +
            std::to_string(config.world_size));
  }

  config.local_rank = env_local.value_or(config.rank);
  if (opts.store) {
    config.store = opts.store;
  } else {
    config.store = store_from_env(&config.rank0_hosts_store);
  }
  return config;
}

}  // namespace dtrain::bootstrap
