#include "comm/backends/ucx/ucx_backend.hpp"

#include <chrono>
#include <numeric>

#include "base/error.hpp"
#include "base/log.hpp"
#include "comm/backends/ucx/backend.hpp"
#include "comm/backends/ucx/group.hpp"
#include "comm/schedules/tags.hpp"

namespace dtrain::comm {

namespace {

// The rendezvous keys of the ranks' hosts and of their worker addresses.
constexpr const char* kHostKey = "ucx/hosts";
constexpr const char* kAddressKey = "ucx/worker-addresses";

}  // namespace

std::unique_ptr<Backend> make_ucx_backend(bootstrap::Rendezvous& rendezvous, int timeout_ms,
                                          const std::string& store_host) {
  return make_ucx_backend(rendezvous, timeout_ms, ucx::Tuning::from_env(), store_host);
}

std::unique_ptr<Backend> make_ucx_backend(bootstrap::Rendezvous& rendezvous, int timeout_ms,
                                          const ucx::Tuning& tuning, const std::string& store_host) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const int rank = rendezvous.rank();
  const int size = rendezvous.size();
  if (size > schedule::kMaxRanks) {
    raise(DT_ERR_UNSUPPORTED, "the UCX backend supports at most " + std::to_string(schedule::kMaxRanks) +
                                  " ranks, not " + std::to_string(size));
  }
  // Where the ranks are decides which interfaces UCX may listen on, so it
  // is known before the worker exists.
  const ucx::NetScope scope = ucx::choose_net_scope(rendezvous.allgather(kHostKey, ucx::describe_host()), store_host);
  DT_LOG(debug) << "UCX network devices: " << (scope.devices.empty() ? "UCX's default" : scope.devices) << " ("
                << scope.reason << ")";
  auto transport = std::make_unique<ucx::Transport>(size, scope);
  // Each rank publishes its process identity followed by its worker address.
  const ucx::ProcessIdentity me = ucx::ProcessIdentity::self();
  std::vector<std::string> published = rendezvous.allgather(kAddressKey, me.encode() + transport->address());
  if (static_cast<int>(published.size()) != size) {
    raise(DT_ERR_INTERNAL, "the rendezvous returned " + std::to_string(published.size()) + " addresses for " +
                               std::to_string(size) + " ranks");
  }
  std::vector<std::string> addresses;
  std::vector<ucx::ProcessIdentity> identities;
  for (int r = 0; r < size; ++r) {
    if (published[r].size() <= ucx::ProcessIdentity::kEncodedSize) {
      raise(DT_ERR_MISMATCH, "rank " + std::to_string(rank) + ": rank " + std::to_string(r) +
                                 " published no UCX worker address (is it running another backend?)");
    }
    identities.push_back(ucx::ProcessIdentity::decode(published[r]));
    addresses.push_back(published[r].substr(ucx::ProcessIdentity::kEncodedSize));
  }
  transport->connect(addresses, rank, 0);
  std::vector<int> world(static_cast<std::size_t>(size));
  std::iota(world.begin(), world.end(), 0);
  auto backend = std::make_unique<ucx::UcxBackend>(std::move(transport), rank, 0, std::move(world),
                                                   std::move(identities), tuning, timeout_ms);
  backend->handshake(deadline);
  DT_LOG(debug) << "UCX backend ready: rank " << rank << " of " << size;
  return backend;
}

}  // namespace dtrain::comm

namespace dtrain::comm::ucx {

namespace {

// The algorithms' names in the op log and the trace; the tuned ones by
// algorithm_name(), as DTRAIN_*_ALGO spells them.
constexpr const char* kSharedMemory = "shared_memory";
constexpr const char* kDirect = "direct";
constexpr const char* kTagged = "tagged";

RequestPtr named(RequestPtr request, const char* algorithm) {
  request->set_algorithm(algorithm);
  return request;
}

RequestPtr named(RequestPtr request, Algorithm algorithm) { return named(std::move(request), algorithm_name(algorithm)); }

}  // namespace

UcxBackend::UcxBackend(std::unique_ptr<Transport> transport, int rank, std::uint32_t context,
                       std::vector<int> world_ranks, std::vector<ProcessIdentity> identities, const Tuning& tuning,
                       int timeout_ms)
    : context_(context),
      world_ranks_(world_ranks),
      identities_(identities),
      timeout_ms_(timeout_ms),
      scope_(transport->scope()),
      engine_(std::move(transport), rank, context, std::move(world_ranks), std::move(identities), tuning) {}

RequestPtr UcxBackend::start(const Collective& op) {
  switch (op.kind) {
    case CallKind::allreduce: return start_allreduce(op);
    case CallKind::reduce_scatter: return start_reduce_scatter(op);
    case CallKind::allgather: return start_allgather(op);
    case CallKind::broadcast: return start_broadcast(op);
    case CallKind::alltoallv: return start_alltoallv(op);
    case CallKind::reduce: return start_reduce(op);
    case CallKind::gather: return start_gather(op);
    case CallKind::scatter: return start_scatter(op);
    case CallKind::allgatherv: return start_allgatherv(op);
    case CallKind::reduce_scatterv: return start_reduce_scatterv(op);
    case CallKind::barrier: return named(engine_.submit(schedule::dissemination_barrier()), "dissemination");
    case CallKind::send: return named(engine_.submit(schedule::tagged_send(op.send, op.peer, op.tag)), kTagged);
    case CallKind::recv: return named(engine_.submit(schedule::tagged_recv(op.recv, op.peer, op.tag)), kTagged);
    case CallKind::p2p_group: return named(engine_.submit(schedule::p2p_group(op.group)), kTagged);
    default: unsupported(op);
  }
}

RequestPtr UcxBackend::in_memory(const Collective& collective) {
  if (RequestPtr done = engine_.run_now(collective, timeout_ms_, true)) return named(std::move(done), kSharedMemory);
  const bool allreduce = collective.kind == CallKind::allreduce;
  return named(engine_.submit(allreduce ? local_allreduce(collective, engine_.group()) : local_exchange(collective, engine_.group())), kSharedMemory);
}

RequestPtr UcxBackend::start_allreduce(const Collective& c) {
  if (engine_.tuning().allreduce == Algorithm::automatic && engine_.shares_memory_for(c.recv.bytes())) {
    return in_memory(c);
  }
  const Algorithm algorithm = engine_.tuning().pick_allreduce(c.recv.bytes(), c.recv.count, engine_.size());
  if (algorithm == Algorithm::recursive_doubling) {
    if (RequestPtr done = engine_.run_now(c, timeout_ms_, false)) return named(std::move(done), algorithm);
  }
  switch (algorithm) {
    case Algorithm::ring: return named(engine_.submit(schedule::ring_allreduce(c.send, c.recv, c.op)), algorithm);
    case Algorithm::halving_doubling:
      return named(engine_.submit(schedule::halving_doubling_allreduce(c.send, c.recv, c.op)), algorithm);
    default: return named(engine_.submit(schedule::recursive_allreduce(c.send, c.recv, c.op)), Algorithm::recursive_doubling);
  }
}

RequestPtr UcxBackend::start_reduce_scatter(const Collective& c) {
  if (engine_.tuning().reduce_scatter == Algorithm::automatic && engine_.exchanges_in_memory()) return in_memory(c);
  const Algorithm algorithm = engine_.tuning().pick_reduce_scatter(c.send.bytes(), engine_.size());
  return named(engine_.submit(algorithm == Algorithm::ring ? schedule::ring_reduce_scatter(c.send, c.recv, c.op)
                                                           : schedule::recursive_reduce_scatter(c.send, c.recv, c.op)),
               algorithm);
}

RequestPtr UcxBackend::start_allgather(const Collective& c) {
  if (engine_.tuning().allgather == Algorithm::automatic && engine_.exchanges_in_memory()) return in_memory(c);
  const Algorithm algorithm = engine_.tuning().pick_allgather(c.recv.bytes(), engine_.size());
  return named(engine_.submit(algorithm == Algorithm::ring ? schedule::ring_allgather(c.send, c.recv)
                                                           : schedule::bruck_allgather(c.send, c.recv)),
               algorithm);
}

RequestPtr UcxBackend::start_broadcast(const Collective& c) {
  if (engine_.tuning().broadcast == Algorithm::automatic && engine_.exchanges_in_memory()) return in_memory(c);
  const Algorithm algorithm = engine_.tuning().pick_broadcast(c.recv.bytes(), engine_.size());
  return named(engine_.submit(algorithm == Algorithm::pipeline ? schedule::pipeline_broadcast(c.recv, c.root)
                                                               : schedule::tree_broadcast(c.recv, c.root)),
               algorithm);
}

RequestPtr UcxBackend::start_alltoallv(const Collective& c) {
  if (engine_.exchanges_in_memory()) return in_memory(c);
  return named(engine_.submit(schedule::pairwise_alltoallv(c.send, c.send_counts, c.recv, c.recv_counts)), "pairwise");
}

RequestPtr UcxBackend::start_reduce(const Collective& c) {
  if (engine_.exchanges_in_memory()) return in_memory(c);
  return named(engine_.submit(schedule::direct_reduce(c.send, c.recv, c.op, c.root, engine_.size())), kDirect);
}

RequestPtr UcxBackend::start_gather(const Collective& c) {
  if (engine_.exchanges_in_memory()) return in_memory(c);
  ExchangePlan plan = gather_plan(engine_.rank(), engine_.size(), c.send, c.recv, c.root);
  return named(engine_.submit(schedule::direct_gather(plan, c.send.dtype, c.send.count, c.root)), kDirect);
}

RequestPtr UcxBackend::start_scatter(const Collective& c) {
  if (engine_.exchanges_in_memory()) return in_memory(c);
  ExchangePlan plan = scatter_plan(engine_.rank(), engine_.size(), c.send, c.recv, c.root);
  return named(engine_.submit(schedule::direct_scatter(plan, c.recv.dtype, c.recv.count, c.root)), kDirect);
}

RequestPtr UcxBackend::start_allgatherv(const Collective& c) {
  if (engine_.exchanges_in_memory()) return in_memory(c);
  ExchangePlan plan = allgatherv_plan(engine_.rank(), engine_.size(), c.send, c.recv, c.recv_counts);
  return named(engine_.submit(schedule::direct_allgatherv(plan, c.recv.dtype, c.recv_counts)), kDirect);
}

RequestPtr UcxBackend::start_reduce_scatterv(const Collective& c) {
  if (engine_.exchanges_in_memory()) return in_memory(c);
  return named(engine_.submit(schedule::direct_reduce_scatterv(c.send, c.recv_counts, c.recv, c.op)), kDirect);
}

void UcxBackend::abort() { engine_.abort(); }

bool UcxBackend::wait(const RequestPtr& request, Clock::time_point deadline) {
  return engine_.wait(request, deadline);
}

std::string UcxBackend::unresponsive_ranks(const Request& request) {
  std::string text;
  Group group;
  group.world_ranks = &world_ranks_;
  for (int r : engine_.waiting_on(request)) {
    text += text.empty() ? "" : ", ";
    text += describe_rank(group, r);
  }
  return text;
}

void UcxBackend::run(std::unique_ptr<Operation> op, Clock::time_point deadline) {
  RequestPtr request = engine_.submit(std::move(op));
  if (!wait(request, deadline)) {
    const std::string message = timeout_message("rank " + std::to_string(engine_.rank()) + ": " + request->what(),
                                                timeout_ms_, unresponsive_ranks(*request));
    engine_.break_with(DT_ERR_TIMEOUT, "an earlier operation timed out (" + message + ")");
    raise(DT_ERR_TIMEOUT, message);
  }
  if (request->status() != DT_OK) raise(request->status(), request->message());
}

void UcxBackend::handshake(Clock::time_point deadline) {
  run(schedule::handshake(), deadline);
  share_memory(deadline);
}

}  // namespace dtrain::comm::ucx
