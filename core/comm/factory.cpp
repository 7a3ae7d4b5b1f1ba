#include "comm/factory.hpp"

#include <atomic>
#include <climits>
#include <cstddef>

#include "base/enum_value.hpp"
#include "base/env.hpp"
#include "base/error.hpp"
#include "base/log.hpp"
#include "base/options.hpp"
#include "bootstrap/launch_env.hpp"
#include "bootstrap/open_rendezvous.hpp"
#include "comm/backends/self/self_backend.hpp"
#include "comm/backends/ucx/ucx_backend.hpp"

namespace dtrain::comm {

namespace {

// Size of each released version of dt_comm_options; index = version.
constexpr std::size_t kCommOptionsSizes[] = {0, sizeof(dt_comm_options)};

constexpr int kDefaultTimeoutMs = 300000;

int resolve_timeout(int option) {
  if (option != DT_UNDEF) {
    if (option <= 0) {
      raise(DT_ERR_INVALID_ARGUMENT, "options.timeout_ms = " + std::to_string(option) + " is not positive");
    }
    return option;
  }
  return env::get_int("DTRAIN_TIMEOUT_MS", 1, INT_MAX).value_or(kDefaultTimeoutMs);
}

void check_backend(const dt_comm_options& opts) {
  const int backend = enum_value(opts.backend);
  switch (backend) {
    case DT_BACKEND_AUTO:
    case DT_BACKEND_UCX:
      break;
    case DT_BACKEND_NCCL:
      raise(DT_ERR_UNSUPPORTED, "options.backend = DT_BACKEND_NCCL: this build has no NCCL backend");
    default:
      raise(DT_ERR_INVALID_ARGUMENT,
            "options.backend = " + std::to_string(backend) + " is not a dt_backend");
  }
  if (opts.device != DT_UNDEF) {
    if (opts.device < 0) {
      raise(DT_ERR_INVALID_ARGUMENT, "options.device = " + std::to_string(opts.device) + " is negative");
    }
    raise(DT_ERR_UNSUPPORTED, "options.device = " + std::to_string(opts.device) +
                                  ": this build has no CUDA device support");
  }
}

}  // namespace

dt_comm_options default_comm_options() {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  return opts;
}

void init_comm_options(dt_comm_options* opts, unsigned version) {
  init_options(opts, version, default_comm_options(), kCommOptionsSizes, "dt_comm_options");
}

std::shared_ptr<Communicator> create_communicator(const dt_comm_options* user) {
  dt_comm_options opts = read_options(user, default_comm_options(), kCommOptionsSizes, "options");
  check_backend(opts);
  const int timeout_ms = resolve_timeout(opts.timeout_ms);
  bootstrap::LaunchConfig launch = bootstrap::resolve_launch(opts);

  log::set_rank(launch.rank);

  std::unique_ptr<Backend> backend;
  if (launch.world_size == 1) {
    backend = std::make_unique<SelfBackend>();
  } else {
    // Every rank creates its communicators in the same order, so the n-th
    // creation of each process meets the n-th of the others under one scope.
    static std::atomic<unsigned> creations{0};
    const std::string scope = "comm" + std::to_string(creations++) + "/";
    auto rendezvous = bootstrap::open_rendezvous(opts, launch, std::chrono::milliseconds(timeout_ms), scope);
    backend = make_ucx_backend(*rendezvous, timeout_ms);
  }
  DT_LOG(info) << "communicator created: rank " << launch.rank << " of " << launch.world_size << " (from "
               << (launch.source.empty() ? "defaults" : launch.source) << "), backend " << backend->name()
               << ", timeout " << timeout_ms << " ms";
  return std::make_shared<Communicator>(launch.rank, launch.world_size, timeout_ms, std::move(backend));
}

}  // namespace dtrain::comm
