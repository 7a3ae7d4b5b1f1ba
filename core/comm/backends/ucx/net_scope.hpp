// Which network devices a communicator's UCX workers may use.
//
// UCX's TCP transport opens one listening socket per network interface it
// may use, on that interface's address, and accepts whoever connects: UCX
// authenticates no one. Left to its defaults it uses every interface, so
// each rank would listen on the machine's external addresses even when all
// ranks share one host. The scope chosen here narrows that to what the job
// needs:
//   - DTRAIN_NET_IFNAME, when set: those interfaces (a name or a
//     comma-separated list), on every job;
//   - otherwise, all ranks on one host (same kernel boot and network
//     namespace): the loopback interface only, beside shared memory;
//   - otherwise: the interface through which this host reaches the
//     rendezvous store (the one holding the store's address on the store's
//     own host), or, without a store, the interface of the default route.
// A multi-host scope keeps the host's RDMA ports (/sys/class/infiniband),
// which move data through verbs and listen on no TCP port. A UCX_NET_DEVICES
// the user set wins over all of this.
//
// The scope also lists every address of every host of the job (loopback
// excepted): each listener UCX opens on an address other than loopback
// takes connections from those addresses alone (peer_filter.hpp). That
// holds for the interfaces of a UCX_NET_DEVICES the user set as well.
// Loopback listeners, which every local process reaches anyway, are not
// filtered.
#pragma once

#include <string>
#include <vector>

namespace dtrain::comm::ucx {

struct NetScope {
  std::string devices;  // UCX's NET_DEVICES; empty: UCX's default (every device)
  std::string reason;   // how it was chosen, for the log
  // Numeric addresses of the job's hosts; when not empty, the only sources
  // UCX's listeners take connections from.
  std::vector<std::string> peer_addresses;
};

// What tells ranks that can reach each other over loopback: the kernel's
// boot id and this process's network namespace.
std::string host_key();

// What a rank tells the others about its host before the workers exist:
// host_key(), then '|' and the host's addresses (every interface's but
// loopback's), comma-separated.
std::string describe_host();

// The scope for a communicator whose ranks described their hosts as `hosts`
// (describe_host(); a bare host key is a host without addresses);
// `store_host` is the rendezvous store's host as the job names it (empty:
// no store). Throws DT_ERR_INVALID_ARGUMENT when DTRAIN_NET_IFNAME names an
// interface this host does not have.
NetScope choose_net_scope(const std::vector<std::string>& hosts, const std::string& store_host);

// Parts of the choice, exposed for tests.
// The interface holding the local address through which `host` is reached
// ("" when it cannot be resolved or is reached over loopback).
std::string interface_reaching(const std::string& host);
// The interface of the default route in a /proc/net/route table ("" if none).
std::string default_route_interface(const std::string& route_table);
// "device:port" for each RDMA port under `sysfs_infiniband`
// (/sys/class/infiniband), sorted.
std::vector<std::string> rdma_ports(const std::string& sysfs_infiniband);

}  // namespace dtrain::comm::ucx
