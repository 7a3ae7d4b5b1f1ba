// Which network devices UCX may use: loopback for one host, the named or
// the store's interface otherwise, and the pieces of that choice.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "base/error.hpp"
#include "comm/backends/ucx/net_scope.hpp"
#include "common/scoped_env.hpp"

namespace dtrain::comm::ucx {
namespace {

using test::ScopedEnv;

// An interface that is up with an IPv4 address other than loopback, and
// that address; empty where the host has none.
std::pair<std::string, std::string> external_ipv4() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::pair<std::string, std::string> found;
  for (ifaddrs* i = list; i != nullptr && found.first.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    found = {i->ifa_name, text};
  }
  freeifaddrs(list);
  return found;
}

TEST(UcxNetScope, OneHostUsesLoopbackOnly) {
  const NetScope scope = choose_net_scope({host_key(), host_key(), host_key()}, "192.0.2.1");
  EXPECT_EQ(scope.devices, "lo");
}

TEST(UcxNetScope, SeveralHostsAllowTheirAddressesOnly) {
  ScopedEnv env("DTRAIN_NET_IFNAME", "lo");
  EXPECT_EQ(choose_net_scope({"a|10.0.0.2,fd00::2", "b|10.0.0.1", "a|10.0.0.2,fd00::2"}, "").peer_addresses,
            (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "fd00::2"}));
  // A host that named no address would be shut out: then nothing is filtered.
  EXPECT_TRUE(choose_net_scope({"a|10.0.0.2", "b|"}, "").peer_addresses.empty());
  // One host too: its listeners beyond loopback, if any, are for itself.
  EXPECT_EQ(choose_net_scope({"a|10.0.0.2", "a|10.0.0.2"}, "").peer_addresses,
            (std::vector<std::string>{"10.0.0.2"}));
}

TEST(UcxNetScope, DescribesThisHost) {
  const std::string mine = describe_host();
  EXPECT_EQ(mine.substr(0, mine.find('|')), host_key());
  const auto [name, address] = external_ipv4();
  if (!name.empty()) {
    EXPECT_NE(mine.find(address), std::string::npos) << mine;
  }
  EXPECT_EQ(mine.find("127.0.0.1"), std::string::npos) << mine;
}

TEST(UcxNetScope, HostKeyNamesBootAndNetworkNamespace) {
  std::string boot;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), boot);
  struct stat ns {};
  ASSERT_EQ(stat("/proc/self/ns/net", &ns), 0);
  EXPECT_EQ(host_key(), boot + "/" + std::to_string(ns.st_ino));
}

TEST(UcxNetScope, NamedInterfaceWinsOnAnyJob) {
  ScopedEnv env("DTRAIN_NET_IFNAME", "lo");
  EXPECT_EQ(choose_net_scope({"a", "a"}, "").devices, "lo");
  // Several hosts: the named interface first, then any RDMA ports.
  EXPECT_EQ(choose_net_scope({"a", "b"}, "").devices.substr(0, 2), "lo");
  EXPECT_EQ(choose_net_scope({"a", "b"}, "").reason, "DTRAIN_NET_IFNAME");
}

TEST(UcxNetScope, UnknownInterfaceIsRejected) {
  ScopedEnv env("DTRAIN_NET_IFNAME", "lo,dtnosuch0");
  try {
    choose_net_scope({"a", "b"}, "");
    FAIL() << "expected DT_ERR_INVALID_ARGUMENT";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("'dtnosuch0'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("it has lo"), std::string::npos) << e.what();
  }
}

TEST(UcxNetScope, EmptyInterfaceListIsRejected) {
  ScopedEnv env("DTRAIN_NET_IFNAME", ",");
  try {
    choose_net_scope({"a"}, "");
    FAIL() << "expected DT_ERR_INVALID_ARGUMENT";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
  }
}

TEST(UcxNetScope, StoreOverLoopbackOrUnknownReachesNoInterface) {
  EXPECT_EQ(interface_reaching("127.0.0.1"), "");
  EXPECT_EQ(interface_reaching("::1"), "");
  EXPECT_EQ(interface_reaching("dtrain-no-such-host.invalid"), "");
}

TEST(UcxNetScope, SeveralHostsUseTheStoresInterface) {
  const auto [name, address] = external_ipv4();
  if (name.empty()) GTEST_SKIP() << "this host has no IPv4 interface but loopback";
  // The store on this host's own address: the interface holding it.
  EXPECT_EQ(interface_reaching(address), name);
  const NetScope scope = choose_net_scope({"a", "b"}, address);
  EXPECT_EQ(scope.devices.substr(0, name.size()), name) << scope.devices;
  EXPECT_NE(scope.reason.find(address), std::string::npos) << scope.reason;
}

TEST(UcxNetScope, DefaultRouteFromTheRoutingTable) {
  const std::string header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";
  const std::string table = header +
                            "eth1\t00000000\t0102A8C0\t0003\t0\t0\t200\t00000000\t0\t0\t0\n"
                            "eth2\t00000000\t0103A8C0\t0002\t0\t0\t0\t00000000\t0\t0\t0\n"  // down
                            "eth3\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n"  // not default
                            "eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n";
  EXPECT_EQ(default_route_interface(table), "eth0");
  EXPECT_EQ(default_route_interface(header + "eth3\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n"), "");
  EXPECT_EQ(default_route_interface(""), "");
}

TEST(UcxNetScope, RdmaPortsFromSysfs) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("dtrain-ib-" + std::to_string(::getpid()));
  fs::create_directories(root / "mlx5_1" / "ports" / "1");
  fs::create_directories(root / "mlx5_0" / "ports" / "2");
  fs::create_directories(root / "mlx5_0" / "ports" / "1");
  EXPECT_EQ(rdma_ports(root.string()), (std::vector<std::string>{"mlx5_0:1", "mlx5_0:2", "mlx5_1:1"}));
  fs::remove_all(root);
  EXPECT_TRUE(rdma_ports(root.string()).empty());
}

}  // namespace
}  // namespace dtrain::comm::ucx
