// One UCP context and worker with endpoints to every rank of a communicator:
// the only code that calls UCP. Not thread-safe: the engine serialises every
// call except signal(), which UCP allows from any thread.
//
// It also tells a peer that left from one that died. A rank destroying its
// communicator in good order first sends every peer a "goodbye"
// (say_goodbye()); every transport listens for them. Its endpoints may then
// fail like those of a dead rank, but only what still waits on it is
// affected, whereas a peer that fails without a goodbye breaks everything.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <ucp/api/ucp.h>

#include "comm/backends/ucx/net_scope.hpp"
#include "comm/request.hpp"
#include "comm/schedules/messages.hpp"

namespace dtrain::comm::ucx {

using schedule::Transfer;

class Transport final : public schedule::Messages {
 public:
  // Creates the context and worker; `expected_peers` sizes UCP's tables,
  // `scope` limits the network devices UCX may use (unless UCX_NET_DEVICES
  // is set).
  Transport(int expected_peers, NetScope scope);
  ~Transport();

  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // This worker's address, to be handed to the peers.
  const std::string& address() const { return address_; }
  const NetScope& scope() const { return scope_; }

  // Creates an endpoint to each rank's worker (this rank's own included), in
  // error-handling mode PEER, and starts listening for goodbyes. Wire-up
  // itself happens on first use.
  void connect(const std::vector<std::string>& addresses, int self, std::uint32_t context);
  int size() const { return static_cast<int>(peers_.size()); }

  // schedule::Messages. A receive from a peer that is gone is still
  // matched against what it sent before it went, and cancelled if nothing
  // is there. A transfer's cause is the ucs_status_t UCP reported.
  void send(Transfer& transfer, int peer, schedule::Tag tag, const void* data, std::size_t bytes) override;
  void recv(Transfer& transfer, int peer, schedule::Tag tag, void* data, std::size_t bytes) override;
  void cancel(Transfer& transfer) override;

  // Progresses the worker; goodbyes that arrived are recorded.
  unsigned progress();
  // Prepares the worker for sleeping on event_fd().
  enum class Arm {
    armed,      // events will make event_fd() readable
    busy,       // there are events to progress first
    unavailable // the worker cannot be armed: sleep only briefly
  };
  Arm arm();
  int event_fd() const { return event_fd_; }
  // Wakes a thread sleeping on event_fd(). Safe from any thread.
  void signal();

  // Endpoints that failed since the last call: (peer, reason).
  std::vector<std::pair<int, ucs_status_t>> take_failures();
  bool has_failures() const { return has_failures_.load(std::memory_order_acquire); }
  // Peers that said goodbye since the last call.
  std::vector<int> take_departures();
  bool has_departures() const { return !departures_.empty(); }
  bool departed(int peer) const { return peers_[peer]->departed; }
  // `cause`: a ucs_status_t (UCS_OK: none); the peer's own failure, when
  // UCP reported one, comes first.
  std::string loss(int peer, std::int32_t cause) const override;

  // Tells every healthy peer that this rank is leaving in good order, and
  // waits (until `deadline`) for the messages to go out.
  void say_goodbye(Clock::time_point deadline);

  // Closes the endpoint at once; what is pending on it fails with
  // UCS_ERR_CANCELED. Later sends to `peer` fail immediately.
  void force_close(int peer);
  // Records that `peer` failed in a way UCP did not notice (`why`, for
  // messages) and closes its endpoint.
  void declare_failed(int peer, const std::string& why);
  bool gone(int peer) const override { return peers_[peer]->failed || peers_[peer]->departed; }
  // Closes every endpoint: healthy ones flushed until `deadline` (so that
  // what was sent still arrives), the others, or all when `force`, at once.
  void close_all(Clock::time_point deadline, bool force);

 private:
  struct Peer {
    Transport* transport = nullptr;
    int rank = -1;
    ucp_ep_h ep = nullptr;
    bool failed = false;  // the endpoint failed or was closed
    ucs_status_t failure = UCS_OK;
    std::string failure_note;  // when libdtrain noticed it rather than UCP
    bool departed = false;  // it said goodbye
  };

  static void on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void on_send(void* request, ucs_status_t status, void* user_data);
  static void on_recv(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info, void* user_data);
  static void finish(Transfer& transfer, ucs_status_t status);
  void settle(Transfer& transfer, ucs_status_ptr_t result);
  void listen_for_goodbye();

  NetScope scope_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
  bool arm_failure_logged_ = false;
  std::string address_;
  // unique_ptr: the error callback holds a pointer to its Peer.
  std::vector<std::unique_ptr<Peer>> peers_;
  int self_ = 0;
  std::uint32_t context_id_ = 0;
  Transfer goodbye_;                // the standing receive for goodbyes
  std::uint32_t goodbye_from_ = 0;  // what it receives: the leaving rank
  std::uint32_t goodbye_rank_ = 0;  // what this rank sends when leaving
  std::deque<Transfer> farewells_;  // the goodbyes sent; UCP may call back until the worker goes
  std::vector<int> departures_;

  std::mutex failures_mutex_;  // the error callback's own lock
  std::vector<std::pair<int, ucs_status_t>> failures_;
  std::atomic<bool> has_failures_{false};
};

}  // namespace dtrain::comm::ucx
