// The UCX backend: host-memory collectives and point-to-point messages over
// UCP's tag API, one UCP context and worker per communicator.
#pragma once

#include <memory>
#include <string>

#include "bootstrap/rendezvous.hpp"
#include "comm/backend.hpp"
#include "comm/backends/ucx/tuning.hpp"

namespace dtrain::comm {

// Creates rank `rendezvous.rank()` of `rendezvous.size()`: a UCP context and
// worker, the workers' addresses exchanged through `rendezvous`, an endpoint
// to every rank, and an empty message to and from each so that every
// endpoint is wired up before this returns. All of it within `timeout_ms`;
// otherwise DT_ERR_TIMEOUT naming the ranks not heard from. Algorithms and
// pipelining follow the DTRAIN_* variables of tuning.hpp. UCX reads its
// UCX_* variables as usual; unless they say otherwise, shared memory's
// peer-failure support is switched on (UCX_MM_ERROR_HANDLING=y), without
// which UCX would route intra-node traffic over TCP, and UCP's keepalive
// runs every second (UCX_KEEPALIVE_INTERVAL=1s).
//
// Before the workers exist the ranks compare their hosts through
// `rendezvous`, and UCX's network devices are limited accordingly
// (net_scope.hpp): loopback when every rank shares this host, otherwise
// DTRAIN_NET_IFNAME or the interface reaching `store_host` (the rendezvous
// store's host; empty when the job has none). DT_ERR_INVALID_ARGUMENT when
// DTRAIN_NET_IFNAME names an interface this host lacks.
std::unique_ptr<Backend> make_ucx_backend(bootstrap::Rendezvous& rendezvous, int timeout_ms,
                                          const std::string& store_host = "");

// The same with explicit tuning instead of the environment's.
std::unique_ptr<Backend> make_ucx_backend(bootstrap::Rendezvous& rendezvous, int timeout_ms,
                                          const ucx::Tuning& tuning, const std::string& store_host = "");

}  // namespace dtrain::comm
