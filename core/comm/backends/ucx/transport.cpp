#include "comm/backends/ucx/transport.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "base/error.hpp"
#include "base/log.hpp"
#include "comm/backends/ucx/peer_filter.hpp"
#include "comm/schedules/tags.hpp"

namespace dtrain::comm::ucx {

using schedule::goodbye_tag;
using schedule::kAnySourceMask;
using schedule::kFullMask;

namespace {

[[noreturn]] void fail(const char* what, ucs_status_t status) {
  raise(DT_ERR_TRANSPORT, std::string("UCX: ") + what + " failed: " + ucs_status_string(status));
}

// Settings libdtrain needs unless the user chose otherwise through UCX_*
// variables. Shared memory advertises no peer-failure handling by default in
// UCX 1.13, so with error mode PEER it would not be used at all and
// intra-node traffic would go over TCP (about half as fast); MM_ERROR_HANDLING
// (which the POSIX_ and SYSV_ settings inherit) turns it on. UCP's keepalive
// period is shortened from 20 s so that the failures it can see are seen
// soon; a dead process behind shared memory is not among them in UCX 1.13,
// which is why the engine watches local peers itself (liveness.hpp).
// Whether UCX_TLS lets UCX load a shared-memory transport. Only then does the
// shared-memory error-handling default below mean anything; otherwise UCX
// warns that the setting is invalid.
bool shared_memory_allowed() {
  const char* tls = std::getenv("UCX_TLS");
  if (tls == nullptr || *tls == '^') return true;  // unset, or an exclusion list
  std::string list = std::string(",") + tls + ",";
  for (const char* name : {"all", "sm", "shm", "posix", "sysv", "xpmem", "cma", "knem"}) {
    if (list.find(std::string(",") + name + ",") != std::string::npos) return true;
  }
  return false;
}

void apply_defaults(ucp_config_t* config, const NetScope& scope) {
  struct Default {
    const char* name;
    const char* value;
    std::vector<const char*> user_overrides;
  };
  const Default defaults[] = {
      // Where UCX may listen and connect: net_scope.hpp.
      {"NET_DEVICES", scope.devices.c_str(), {"UCX_NET_DEVICES"}},
      {"MM_ERROR_HANDLING", "y", {"UCX_MM_ERROR_HANDLING", "UCX_POSIX_ERROR_HANDLING", "UCX_SYSV_ERROR_HANDLING"}},
      {"KEEPALIVE_INTERVAL", "1s", {"UCX_KEEPALIVE_INTERVAL"}},
      // Messages below 64 KiB go eager: the rendezvous handshake needs the
      // receiver's progress before any data moves, which costs more than
      // the extra copy for the 16-64 KiB messages of recursive doubling and
      // pipeline tails, above all with ranks sharing cores. Larger ones keep
      // the rendezvous, whose handshake holds the data at the sender until
      // its receive is posted. (Between local ranks it gives no single copy:
      // with error handling UCX 1.13 offers shared memory's active messages
      // only, no CMA lane. Sending the ring's 128 KiB chunks eager was 0-13%
      // slower at 2 ranks.)
      {"RNDV_THRESH", "65536", {"UCX_RNDV_THRESH"}},
  };
  for (const Default& d : defaults) {
    if (std::string(d.name) == "MM_ERROR_HANDLING" && !shared_memory_allowed()) continue;
    if (*d.value == '\0') continue;  // no choice made: UCX's own default
    if (std::any_of(d.user_overrides.begin(), d.user_overrides.end(),
                    [](const char* v) { return std::getenv(v) != nullptr; })) {
      continue;
    }
    ucs_status_t status = ucp_config_modify(config, d.name, d.value);
    if (status != UCS_OK) {
      DT_LOG(debug) << "UCX: cannot set " << d.name << "=" << d.value << ": " << ucs_status_string(status);
    }
  }
}

}  // namespace

Transport::Transport(int expected_peers, NetScope scope) : scope_(std::move(scope)) {
  // UCX's listeners are among the descriptors that appear from here on.
  const std::set<int> before = scope_.peer_addresses.empty() ? std::set<int>{} : open_descriptors();
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) fail("reading the configuration", status);
  apply_defaults(config, scope_);

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  params.estimated_num_eps = static_cast<size_t>(expected_peers);
  status = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (status != UCS_OK) fail("ucp_init", status);

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // The engine's lock serialises all calls, from its progress thread and
  // from callers; UCP needs no locks of its own.
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  status = ucp_worker_create(context_, &worker_params, &worker_);
  if (status != UCS_OK) {
    ucp_cleanup(context_);
    fail("ucp_worker_create", status);
  }

  ucp_address_t* address = nullptr;
  size_t length = 0;
  status = ucp_worker_get_address(worker_, &address, &length);
  if (status == UCS_OK) {
    address_.assign(reinterpret_cast<const char*>(address), length);
    ucp_worker_release_address(worker_, address);
    status = ucp_worker_get_efd(worker_, &event_fd_);
  }
  if (status != UCS_OK) {
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
    fail("setting up the worker", status);
  }
  if (!scope_.peer_addresses.empty()) {
    const std::size_t filtered = filter_new_listeners(before, scope_.peer_addresses);
    DT_LOG(debug) << "UCX: " << filtered << " listening socket(s) take connections from the job's "
                  << scope_.peer_addresses.size() << " host address(es) only";
  }
}

Transport::~Transport() {
  // Endpoints still open here (close_all() was not reached) go without a flush.
  for (auto& peer : peers_) {
    if (peer->ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t request = ucp_ep_close_nbx(peer->ep, &param);
    if (UCS_PTR_IS_PTR(request)) ucp_request_free(request);
    peer->ep = nullptr;
  }
  ucp_worker_destroy(worker_);
  ucp_cleanup(context_);
}

void Transport::connect(const std::vector<std::string>& addresses, int self, std::uint32_t context) {
  self_ = self;
  goodbye_rank_ = static_cast<std::uint32_t>(self);
  context_id_ = context;
  peers_.reserve(addresses.size());
  for (std::size_t rank = 0; rank < addresses.size(); ++rank) {
    auto peer = std::make_unique<Peer>();
    peer->transport = this;
    peer->rank = static_cast<int>(rank);
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = reinterpret_cast<const ucp_address_t*>(addresses[rank].data());
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = &Transport::on_endpoint_error;
    params.err_handler.arg = peer.get();
    ucs_status_t status = ucp_ep_create(worker_, &params, &peer->ep);
    if (status != UCS_OK) {
      raise(DT_ERR_TRANSPORT, "UCX: cannot create an endpoint to rank " + std::to_string(rank) + ": " +
                                  ucs_status_string(status));
    }
    peers_.push_back(std::move(peer));
  }
  listen_for_goodbye();
}

void Transport::listen_for_goodbye() {
  goodbye_.peer = -1;
  goodbye_.receive = true;
  goodbye_.bytes = sizeof goodbye_from_;
  goodbye_.in_flight = true;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &Transport::on_recv;
  param.user_data = &goodbye_;
  goodbye_.posting = true;
  settle(goodbye_, ucp_tag_recv_nbx(worker_, &goodbye_from_, sizeof goodbye_from_, goodbye_tag(context_id_, 0),
                                    kAnySourceMask, &param));
}

void Transport::on_endpoint_error(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* peer = static_cast<Peer*>(arg);
  Transport* self = peer->transport;
  std::lock_guard<std::mutex> lock(self->failures_mutex_);
  self->failures_.emplace_back(peer->rank, status);
  self->has_failures_.store(true, std::memory_order_release);
}

std::vector<std::pair<int, ucs_status_t>> Transport::take_failures() {
  std::lock_guard<std::mutex> lock(failures_mutex_);
  has_failures_.store(false, std::memory_order_release);
  std::vector<std::pair<int, ucs_status_t>> result;
  result.swap(failures_);
  for (auto& [rank, status] : result) {
    peers_[rank]->failed = true;
    if (peers_[rank]->failure == UCS_OK) peers_[rank]->failure = status;
  }
  return result;
}

std::vector<int> Transport::take_departures() {
  std::vector<int> result;
  result.swap(departures_);
  return result;
}

std::string Transport::loss(int peer, std::int32_t cause) const {
  const Peer& p = *peers_[peer];
  if (p.departed) return "has left (its communicator was destroyed)";
  if (!p.failure_note.empty()) return "failed (" + p.failure_note + ")";
  const ucs_status_t why = p.failure != UCS_OK ? p.failure : static_cast<ucs_status_t>(cause);
  return std::string("failed (") + ucs_status_string(why) + ")";
}

void Transport::finish(Transfer& transfer, ucs_status_t status) {
  using schedule::MessageStatus;
  transfer.in_flight = false;
  transfer.cause = status;
  switch (status) {
    case UCS_OK: transfer.status = MessageStatus::ok; break;
    case UCS_ERR_MESSAGE_TRUNCATED: transfer.status = MessageStatus::truncated; break;
    case UCS_ERR_NO_MEMORY: transfer.status = MessageStatus::out_of_memory; break;
    default: transfer.status = MessageStatus::lost; break;
  }
  if (status != UCS_OK && transfer.owner != nullptr) transfer.owner->transfer_failed(transfer);
}

void Transport::on_send(void* request, ucs_status_t status, void* user_data) {
  auto& transfer = *static_cast<Transfer*>(user_data);
  if (!transfer.posting) {
    ucp_request_free(request);
    transfer.handle = nullptr;
  }
  finish(transfer, status);
}

void Transport::on_recv(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data) {
  auto& transfer = *static_cast<Transfer*>(user_data);
  if (!transfer.posting) {
    ucp_request_free(request);
    transfer.handle = nullptr;
  }
  if (status == UCS_OK) {
    transfer.received = info->length;
    // A shorter message than expected is as much a disagreement as a longer
    // one (which UCP reports as truncation).
    if (info->length != transfer.bytes) status = UCS_ERR_MESSAGE_TRUNCATED;
  }
  finish(transfer, status);
}

// Records what a posting call returned: done at once, failed, or pending.
void Transport::settle(Transfer& transfer, ucs_status_ptr_t result) {
  transfer.posting = false;
  if (result == nullptr) {
    finish(transfer, UCS_OK);
  } else if (UCS_PTR_IS_ERR(result)) {
    finish(transfer, UCS_PTR_STATUS(result));
  } else if (!transfer.in_flight) {
    // The callback ran inside the call; the request is ours to release.
    ucp_request_free(result);
  } else {
    transfer.handle = result;
  }
}

void Transport::send(Transfer& transfer, int peer, schedule::Tag tag, const void* data, std::size_t bytes) {
  transfer.peer = peer;
  transfer.receive = false;
  transfer.bytes = bytes;
  transfer.received = 0;
  transfer.handle = nullptr;
  transfer.in_flight = true;
  Peer& target = *peers_[peer];
  if (target.ep == nullptr || gone(peer)) {
    finish(transfer, UCS_ERR_NOT_CONNECTED);
    return;
  }
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &Transport::on_send;
  param.user_data = &transfer;
  transfer.posting = true;
  settle(transfer, ucp_tag_send_nbx(target.ep, data, bytes, tag, &param));
}

void Transport::recv(Transfer& transfer, int peer, schedule::Tag tag, void* data, std::size_t bytes) {
  transfer.peer = peer;
  transfer.receive = true;
  transfer.bytes = bytes;
  transfer.received = 0;
  transfer.handle = nullptr;
  transfer.in_flight = true;
  ucp_request_param_t param{};
  // Immediate completion is refused: UCP 1.13 does not always report the
  // received length then, and the length check is what catches ranks that
  // disagree about sizes.
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = &Transport::on_recv;
  param.user_data = &transfer;
  transfer.posting = true;
  settle(transfer, ucp_tag_recv_nbx(worker_, data, bytes, tag, kFullMask, &param));
  // Receives are matched on the worker, so what a gone peer sent before it
  // went still arrives; anything else never will.
  if (transfer.in_flight && gone(peer)) cancel(transfer);
}

void Transport::cancel(Transfer& transfer) {
  if (transfer.in_flight && transfer.receive && transfer.handle != nullptr) {
    ucp_request_cancel(worker_, transfer.handle);
  }
}

unsigned Transport::progress() {
  const unsigned events = ucp_worker_progress(worker_);
  while (!peers_.empty() && !goodbye_.pending()) {
    if (!goodbye_.ok()) break;  // cancelled at teardown
    const auto source = static_cast<int>(goodbye_from_);
    if (source < size() && !peers_[source]->departed) {
      peers_[source]->departed = true;
      departures_.push_back(source);
    }
    listen_for_goodbye();
  }
  return events;
}

void Transport::say_goodbye(Clock::time_point deadline) {
  std::deque<Transfer>& farewells = farewells_;
  for (auto& peer : peers_) {
    if (peer->rank == self_ || gone(peer->rank)) continue;
    Transfer& t = farewells.emplace_back();
    t.peer = peer->rank;
    t.bytes = sizeof goodbye_rank_;
    t.in_flight = true;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = &Transport::on_send;
    param.user_data = &t;
    t.posting = true;
    // The sender's rank travels as data: UCP 1.13 does not report the
    // sender's tag reliably for some messages.
    settle(t, ucp_tag_send_nbx(peer->ep, &goodbye_rank_, sizeof goodbye_rank_, goodbye_tag(context_id_, self_),
                               &param));
  }
  auto pending = [&] {
    return std::any_of(farewells.begin(), farewells.end(), [](const Transfer& t) { return t.pending(); });
  };
  while (pending() && Clock::now() < deadline) {
    if (progress() == 0) std::this_thread::yield();
  }
  // A peer that does not take the message (stopped, or gone meanwhile)
  // does not hold this rank back.
  if (pending()) {
    for (const Transfer& t : farewells) {
      if (t.pending()) force_close(t.peer);
    }
  }
}

Transport::Arm Transport::arm() {
  const ucs_status_t status = ucp_worker_arm(worker_);
  if (status == UCS_OK) return Arm::armed;
  if (status == UCS_ERR_BUSY) return Arm::busy;
  if (!arm_failure_logged_) {
    arm_failure_logged_ = true;
    DT_LOG(debug) << "UCX: ucp_worker_arm: " << ucs_status_string(status) << "; the progress thread will poll";
  }
  return Arm::unavailable;
}

void Transport::signal() { ucp_worker_signal(worker_); }

void Transport::force_close(int peer) {
  Peer& target = *peers_[peer];
  if (target.ep == nullptr) return;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t request = ucp_ep_close_nbx(target.ep, &param);
  if (UCS_PTR_IS_PTR(request)) ucp_request_free(request);
  target.ep = nullptr;
  target.failed = true;
}

void Transport::declare_failed(int peer, const std::string& why) {
  if (peers_[peer]->failure_note.empty()) peers_[peer]->failure_note = why;
  force_close(peer);
}

void Transport::close_all(Clock::time_point deadline, bool force) {
  std::vector<void*> closing;
  for (auto& peer : peers_) {
    if (peer->ep == nullptr) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    // A failed endpoint can only be closed forcibly; a healthy one is
    // flushed so that messages already handed to UCP still reach the peer.
    param.flags = force || peer->failed ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t request = ucp_ep_close_nbx(peer->ep, &param);
    peer->ep = nullptr;
    if (UCS_PTR_IS_PTR(request)) closing.push_back(request);
  }
  while (!closing.empty()) {
    progress();
    std::erase_if(closing, [](void* request) {
      if (ucp_request_check_status(request) == UCS_INPROGRESS) return false;
      ucp_request_free(request);
      return true;
    });
    if (Clock::now() >= deadline) break;
    if (!closing.empty()) std::this_thread::yield();
  }
  // Closes that did not finish are released; the worker's destruction ends them.
  for (void* request : closing) ucp_request_free(request);
  // Listening went on until now, so that a goodbye arriving meanwhile was
  // taken rather than left unexpected.
  cancel(goodbye_);
  if (!closing.empty()) {
    DT_LOG(debug) << "UCX: " << closing.size() << " endpoint(s) did not finish flushing before the deadline";
  }
}

}  // namespace dtrain::comm::ucx
