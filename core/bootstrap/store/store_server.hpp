// The rendezvous store's server: a TCP key-value store that ranks use to
// exchange what they need at start-up (see protocol.hpp for what it offers,
// store_client.hpp for how to use it).
//
// Who runs it: rank 0 of a job when no external store is given (see
// StoreRendezvous::open), or a launcher such as dtrun, which then hands the
// ranks its address in DTRAIN_STORE.
//
// Where it listens: on 127.0.0.1 unless DTRAIN_STORE_BIND names another
// address of this machine; a wildcard address (0.0.0.0, ::) is honoured only
// when asked for by name and logs a warning. Every client must prove it knows
// the job's auth token (auth.hpp); a client that fails is refused and logged,
// and the others are served on. A client that sends a malformed or oversized
// frame, or that does not authenticate within StoreLimits::handshake_timeout,
// is dropped alone.
//
// Connection slots (limits.hpp): clients that have authenticated have
// StoreLimits::max_connections slots of their own; connections still in their
// handshake have a budget of StoreLimits::max_handshakes apart from those,
// and a new connection beyond it pushes out the oldest one still in its
// handshake. Whatever opens connections without the token (squatters, port
// scanners) therefore only ever competes with itself: it cannot take a slot
// from a client that has authenticated, and a client that answers its
// challenge promptly gets through (if pushed out by a burst, it retries; see
// StoreClient::connect). When the authenticated slots are all taken, a new
// connection is refused with an `error` frame (DT_ERR_OUT_OF_MEMORY, the store
// is full) instead of the challenge, and the client retries until its deadline.
// The server raises the process's soft RLIMIT_NOFILE towards
// max_connections + max_handshakes + 64 (never beyond the hard limit), and
// when descriptors run out anyway it drops the oldest handshake to accept.
//
// Logging: refused and dropped connections are rate-limited (refusal_log.hpp):
// the first of each kind is a WARN line, the rest are summarised once per
// StoreLimits::refusal_log_period ("refused or dropped N more connections in
// the last T s: ..."), and what is counted when the store stops is written
// then. A client that has authenticated and then misbehaves is logged each time.
//
// It serves on one thread of its own with non-blocking sockets and poll(2):
// a slow or silent client never delays the others, and a wait for keys is
// parked until the keys appear or its deadline passes.
#pragma once

#include <memory>
#include <string>

#include "bootstrap/store/limits.hpp"

namespace dtrain::bootstrap {

// DTRAIN_STORE_BIND, or "127.0.0.1" when it is unset.
std::string default_store_bind_host();

class StoreServer {
 public:
  // Starts listening on bind_host:port and serving. `bind_host` empty means
  // default_store_bind_host(); `port` 0 lets the kernel pick one (read it
  // with port() and publish it). `token` must not be empty. Throws
  // DT_ERR_INVALID_ARGUMENT for an empty token, bad limits or an address that
  // is not this machine's, DT_ERR_TRANSPORT when the port is taken.
  StoreServer(const std::string& bind_host, int port, std::string token, StoreLimits limits = {});
  // Stops serving (see stop()).
  ~StoreServer();

  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  // The port it listens on.
  int port() const;
  // The address it listens on, as the socket reports it ("127.0.0.1:41234").
  std::string address() const;
  // The host a client on this machine connects to: the address it listens
  // on, or loopback when that is a wildcard.
  std::string local_host() const;
  // True when it listens on every interface.
  bool wildcard() const;
  // Connections open now, authenticated or not.
  std::size_t connections() const;
  // Of those, the ones still in their handshake.
  std::size_t handshakes() const;

  // Closes every connection and the listening socket and joins the serving
  // thread; the thread never blocks outside poll(2), so this returns
  // promptly. Clients see their connection drop. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dtrain::bootstrap
