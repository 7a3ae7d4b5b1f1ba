#include "comm/factory.hpp"

#include <atomic>
#include <climits>
#include <cstddef>

#include "base/enum_value.hpp"
#include "base/env.hpp"
#include "base/error.hpp"
#include "base/log.hpp"
#include "base/options.hpp"
#include "bootstrap/host_port.hpp"
#include "bootstrap/launch_env.hpp"
#include "bootstrap/open_rendezvous.hpp"
#include "comm/backends/self/self_backend.hpp"
#include "comm/backends/staged/path.hpp"
#include "comm/backends/staged/router.hpp"
#include "comm/backends/ucx/ucx_backend.hpp"
#include "device/probe.hpp"
#include "device/selection.hpp"

#ifdef DTRAIN_HAVE_CUDA
#include <unistd.h>

#include <fstream>

#include "device/cuda/runtime.hpp"
#endif
#ifdef DTRAIN_HAVE_NCCL
#include "comm/backends/nccl/nccl_api.hpp"
#include "comm/backends/nccl/nccl_backend.hpp"
#endif

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
#ifndef DTRAIN_HAVE_NCCL
      raise(DT_ERR_UNSUPPORTED, "options.backend = DT_BACKEND_NCCL: this build has no NCCL backend");
#endif
      break;
    default:
      raise(DT_ERR_INVALID_ARGUMENT,
            "options.backend = " + std::to_string(backend) + " is not a dt_backend");
  }
}

#ifdef DTRAIN_HAVE_CUDA

// What identifies this machine to the other ranks: the kernel's boot id
// (shared by containers on one host, as their GPUs are), else the host name.
std::string machine_id() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (boot && std::getline(boot, id) && !id.empty()) return id;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) return host;
  return "unknown";
}

staged::DeviceCaps local_caps(int device) {
  staged::DeviceCaps caps;
  caps.device = device;
  caps.machine = machine_id();
  if (device >= 0) caps.bus_id = device::cuda::pci_bus_id(device);
#ifdef DTRAIN_HAVE_NCCL
  caps.nccl = device >= 0 && nccl::api() != nullptr;
#endif
  return caps;
}

#ifdef DTRAIN_HAVE_NCCL
std::unique_ptr<Backend> make_nccl(int device, int timeout_ms, Backend& host, int rank, int size,
                                   const std::atomic<bool>& aborted) {
  std::string why;
  const nccl::Api* api = nccl::api(&why);
  if (api == nullptr) raise(DT_ERR_UNSUPPORTED, "NCCL: " + why);
  // Rank 0's unique id reaches the others through the host backend.
  const auto share = [&](ncclUniqueId& id) {
    TensorView view;
    view.data = &id;
    view.count = static_cast<std::int64_t>(sizeof id);
    view.dtype = DType::u8;
    RequestPtr request = host.broadcast(view, 0);
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    if (!host.wait(request, deadline)) {
      // The broadcast is left behind: the host backend cannot go on.
      host.abort();
      raise(DT_ERR_TIMEOUT, "rank " + std::to_string(rank) + ": sharing the NCCL unique id took longer than " +
                                std::to_string(timeout_ms) + " ms");
    }
    if (request->status() != DT_OK) raise(request->status(), request->message());
    if (aborted.load()) raise(DT_ERR_ABORTED, "rank " + std::to_string(rank) + ": aborted");
  };
  return nccl::NcclBackend::create(*api, rank, size, device, timeout_ms, share, &aborted);
}
#endif

// The router that sends CUDA tensors to NCCL or the staged path, agreed
// with every rank (through `rendezvous` for more than one rank).
std::unique_ptr<Backend> attach_devices(std::unique_ptr<Backend> host, const dt_comm_options& opts,
                                        const bootstrap::LaunchConfig& launch, int device, int timeout_ms,
                                        bootstrap::Rendezvous* rendezvous) {
  const staged::DeviceCaps mine = local_caps(device);
  std::vector<staged::DeviceCaps> all;
  if (rendezvous == nullptr) {
    all.push_back(mine);
  } else {
    const auto texts = rendezvous->allgather("devices", staged::encode(mine));
    for (std::size_t r = 0; r < texts.size(); ++r) {
      auto caps = staged::decode(texts[r]);
      if (!caps) raise(DT_ERR_MISMATCH, "rank " + std::to_string(r) + " described its devices in a format this "
                                                                        "library does not read (another version?)");
      all.push_back(*caps);
    }
  }
  const staged::PathChoice choice = staged::choose_path(enum_value(opts.backend), all, launch.rank);
  DT_LOG(info) << "CUDA tensors: " << staged::path_name(choice.path)
               << (device >= 0 ? " on device " + std::to_string(device) + " (" + mine.bus_id + ")" : std::string())
               << (choice.reason.empty() ? std::string() : "; not NCCL: " + choice.reason);

  staged::Devices devices;
  devices.rank = launch.rank;
  devices.size = launch.world_size;
  devices.device = device;
  devices.timeout_ms = timeout_ms;
  devices.path = choice.path;
  devices.tuning = staged::tuning_from_env();
#ifdef DTRAIN_HAVE_NCCL
  devices.make_nccl = [device, timeout_ms](Backend& h, int rank, int size, const std::atomic<bool>& aborted) {
    return make_nccl(device, timeout_ms, h, rank, size, aborted);
  };
#endif
  devices.make_lanes = [device] { return staged::device_lanes(device); };
  devices.check = [device](const TensorView& view, const char* name) {
    device::cuda::check_device_memory(view.data, view.bytes(), name, device);
  };
  auto router = std::make_unique<staged::DeviceRouter>(std::move(host), std::move(devices));
  if (enum_value(opts.backend) == DT_BACKEND_NCCL) router->connect_devices();
  return router;
}

#endif  // DTRAIN_HAVE_CUDA

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
  // The CUDA device: options.device, or the local rank modulo the devices
  // present; -1 (CPU only) without devices.
  const int device =
      device::choose_device(opts.device, launch.local_rank, device::cuda_device_count(), device::cuda_compiled());

  std::unique_ptr<Backend> backend;
  std::unique_ptr<bootstrap::Rendezvous> rendezvous;
  if (launch.world_size == 1) {
    backend = std::make_unique<SelfBackend>();
  } else {
    // Every rank creates its communicators in the same order, so the n-th
    // creation of each process meets the n-th of the others under one scope.
    static std::atomic<unsigned> creations{0};
    const std::string scope = "comm" + std::to_string(creations++) + "/";
    rendezvous = bootstrap::open_rendezvous(opts, launch, std::chrono::milliseconds(timeout_ms), scope);
    // The store's host tells a multi-host job which interface to use; a
    // caller's out-of-band allgather replaces the store.
    const std::string store_host =
        launch.store && opts.oob_allgather == nullptr ? bootstrap::parse_host_port(*launch.store, "the store").host : "";
    backend = make_ucx_backend(*rendezvous, timeout_ms, store_host);
  }
#ifdef DTRAIN_HAVE_CUDA
  backend = attach_devices(std::move(backend), opts, launch, device, timeout_ms, rendezvous.get());
#else
  (void)device;
#endif
  DT_LOG(info) << "communicator created: rank " << launch.rank << " of " << launch.world_size << " (from "
               << (launch.source.empty() ? "defaults" : launch.source) << "), backend " << backend->name()
               << ", timeout " << timeout_ms << " ms";
  // Every rank creates its communicators in the same order: the n-th is
  // labelled alike everywhere.
  static std::atomic<unsigned> labels{0};
  return std::make_shared<Communicator>(launch.rank, launch.world_size, timeout_ms, std::move(backend),
                                        "c" + std::to_string(labels++));
}

}  // namespace dtrain::comm
