#include "comm/backends/ucx/net_scope.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/env.hpp"
#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/log.hpp"

namespace dtrain::comm::ucx {

namespace {

bool same_address(const sockaddr* a, const sockaddr* b) {
  if (a == nullptr || b == nullptr || a->sa_family != b->sa_family) return false;
  if (a->sa_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  }
  if (a->sa_family == AF_INET6) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

// The interface that holds `address`, or "".
std::string interface_with(const sockaddr* address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
    if (same_address(i->ifa_addr, address)) name = i->ifa_name;
  }
  freeifaddrs(list);
  return name;
}

std::string interface_names() {
  std::string text;
  if (struct if_nameindex* names = if_nameindex()) {
    for (struct if_nameindex* n = names; n->if_index != 0; ++n) {
      text += (text.empty() ? "" : ", ") + std::string(n->if_name);
    }
    if_freenameindex(names);
  }
  return text;
}

// DTRAIN_NET_IFNAME's interfaces, each checked to exist.
std::vector<std::string> named_interfaces(const std::string& value) {
  std::vector<std::string> names;
  std::istringstream list(value);
  for (std::string name; std::getline(list, name, ',');) {
    if (name.empty()) continue;
    if (if_nametoindex(name.c_str()) == 0) {
      raise(DT_ERR_INVALID_ARGUMENT, "DTRAIN_NET_IFNAME names interface '" + name +
                                         "', which this host does not have (it has " + interface_names() + ")");
    }
    names.push_back(name);
  }
  if (names.empty()) raise(DT_ERR_INVALID_ARGUMENT, "DTRAIN_NET_IFNAME names no interface: '" + value + "'");
  return names;
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ",") + item;
  return text;
}

}  // namespace

std::string host_key() {
  std::string boot;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id") >> std::ws, boot);
  if (boot.empty()) {
    // Without it, the host's name: hosts must never look alike by mistake.
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    boot = name;
  }
  struct stat ns {};
  const std::string net = stat("/proc/self/ns/net", &ns) == 0 ? std::to_string(ns.st_ino) : "?";
  return boot + "/" + net;
}

std::string describe_host() {
  std::vector<std::string> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
      const int family = i->ifa_addr->sa_family;
      const void* raw = nullptr;
      if (family == AF_INET) raw = &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
      if (family == AF_INET6) raw = &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr;
      char text[INET6_ADDRSTRLEN] = {};
      if (raw != nullptr && inet_ntop(family, raw, text, sizeof text) != nullptr) addresses.emplace_back(text);
    }
    freeifaddrs(list);
  }
  return host_key() + "|" + join(addresses);
}

std::string interface_reaching(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* results = nullptr;
  if (getaddrinfo(host.c_str(), "9", &hints, &results) != 0) return "";
  std::string name;
  for (addrinfo* r = results; r != nullptr && name.empty(); r = r->ai_next) {
    // Connecting a datagram socket sends nothing: it asks the kernel's
    // routing which local address would speak to `host`.
    Fd probe(socket(r->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!probe.valid() || connect(probe.get(), r->ai_addr, r->ai_addrlen) != 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (getsockname(probe.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0) continue;
    name = interface_with(reinterpret_cast<const sockaddr*>(&local));
    if (!name.empty() && (if_nametoindex(name.c_str()) == 0 || name == "lo")) name.clear();
  }
  freeaddrinfo(results);
  return name;
}

std::string default_route_interface(const std::string& route_table) {
  std::istringstream lines(route_table);
  std::string line;
  std::getline(lines, line);  // the header
  std::string best;
  unsigned long best_metric = std::numeric_limits<unsigned long>::max();
  while (std::getline(lines, line)) {
    // Iface Destination Gateway Flags RefCnt Use Metric Mask ...
    std::istringstream fields(line);
    std::string iface, destination, gateway, flags, refcnt, use, mask;
    unsigned long metric = 0;
    if (!(fields >> iface >> destination >> gateway >> flags >> refcnt >> use >> metric >> mask)) continue;
    const bool up = (std::strtoul(flags.c_str(), nullptr, 16) & 0x1) != 0;  // RTF_UP
    if (destination == "00000000" && mask == "00000000" && up && metric < best_metric) {
      best = iface;
      best_metric = metric;
    }
  }
  return best;
}

std::vector<std::string> rdma_ports(const std::string& sysfs_infiniband) {
  namespace fs = std::filesystem;
  std::vector<std::string> ports;
  std::error_code ec;
  for (const auto& device : fs::directory_iterator(sysfs_infiniband, ec)) {
    std::error_code port_ec;
    for (const auto& port : fs::directory_iterator(device.path() / "ports", port_ec)) {
      ports.push_back(device.path().filename().string() + ":" + port.path().filename().string());
    }
  }
  std::sort(ports.begin(), ports.end());
  return ports;
}

NetScope choose_net_scope(const std::vector<std::string>& hosts, const std::string& store_host) {
  std::vector<std::string> host_keys;
  std::vector<std::string> peers;  // every host's addresses
  bool all_addressed = true;
  for (const std::string& host : hosts) {
    const auto bar = host.find('|');
    host_keys.push_back(host.substr(0, bar));
    const std::string addresses = bar == std::string::npos ? "" : host.substr(bar + 1);
    all_addressed = all_addressed && !addresses.empty();
    std::istringstream list(addresses);
    for (std::string a; std::getline(list, a, ',');) peers.push_back(a);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  const bool one_host = std::all_of(host_keys.begin(), host_keys.end(),
                                    [&](const std::string& key) { return key == host_keys.front(); });
  NetScope scope;
  // Whatever UCX listens on beyond loopback (the chosen interfaces, or
  // those of a UCX_NET_DEVICES of the user's) takes the job's hosts alone;
  // a host that named no address would be shut out, so then nothing is
  // filtered.
  if (all_addressed) scope.peer_addresses = std::move(peers);
  std::vector<std::string> interfaces;
  if (auto named = env::get("DTRAIN_NET_IFNAME")) {
    interfaces = named_interfaces(*named);
    scope.reason = "DTRAIN_NET_IFNAME";
  } else if (one_host) {
    scope.devices = "lo";
    scope.reason = "every rank on this host";
    return scope;
  } else if (std::string reaching = store_host.empty() ? "" : interface_reaching(store_host); !reaching.empty()) {
    interfaces.push_back(reaching);
    scope.reason = "the interface reaching the store's host " + store_host;
  } else if (std::string route = default_route_interface(read_file("/proc/net/route")); !route.empty()) {
    interfaces.push_back(route);
    scope.reason = "the default route's interface";
  } else {
    DT_LOG(warn) << "UCX: no interface reaches the store" << (store_host.empty() ? "" : " (" + store_host + ")")
                 << " and there is no default route; UCX may use (and listen on) every interface. Set "
                    "DTRAIN_NET_IFNAME to the job's interface";
    scope.reason = "no interface found";
    return scope;
  }
  if (!one_host) {
    for (std::string& port : rdma_ports("/sys/class/infiniband")) interfaces.push_back(std::move(port));
  }
  scope.devices = join(interfaces);
  return scope;
}

}  // namespace dtrain::comm::ucx
