// Where a rank's process listens for TCP connections while its communicator
// is up. Run under dtrun:
//
//   listeners_check --allow loopback|ADDR[,ADDR...] [--expect-outside] [--hold FILE]
//
// Each rank creates a communicator, runs an allreduce (so every endpoint is
// wired up), lists the listening TCP sockets its own process holds (the
// socket inodes of /proc/self/fd matched against /proc/self/net/tcp and
// tcp6), prints them, and checks that every one is on an allowed address
// ("loopback": 127.0.0.0/8 and ::1). With --expect-outside the check is
// reversed: at least one listener must be outside, which shows that the
// scan sees what UCX opens. With --hold, each rank then waits (up to 30 s)
// for FILE to exist, so that a test can try the listeners meanwhile; not
// seeing it counts as a failure. The ranks agree on the outcome through a
// second allreduce; exit status 0 when it holds on every rank, 1 otherwise, and
// 77 (skipped) on a host whose only interface with an address is loopback,
// where neither check could fail.
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dtrain.h"

namespace {

struct Listener {
  std::string address;  // numeric, without the port
  int port = 0;
  bool loopback = false;
};

std::set<std::string> my_socket_inodes() {
  std::set<std::string> inodes;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return inodes;
  while (dirent* entry = readdir(dir)) {
    char target[128] = {};
    const std::string path = std::string("/proc/self/fd/") + entry->d_name;
    const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    if (n > 0 && std::strncmp(target, "socket:[", 8) == 0) {
      inodes.insert(std::string(target + 8, target + n - 1));
    }
  }
  closedir(dir);
  return inodes;
}

// One /proc/net/tcp* local address ("0100007F:1F90", or 32 hex digits for
// IPv6): the kernel prints each 32-bit word of the address as a host-order
// number.
Listener decode(const std::string& local) {
  Listener l;
  const auto colon = local.find(':');
  const std::string hex = local.substr(0, colon);
  l.port = static_cast<int>(std::stoul(local.substr(colon + 1), nullptr, 16));
  char text[INET6_ADDRSTRLEN] = {};
  if (hex.size() == 8) {
    in_addr a{};
    a.s_addr = static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16));
    inet_ntop(AF_INET, &a, text, sizeof text);
    l.loopback = (ntohl(a.s_addr) >> 24) == 127;
  } else {
    in6_addr a{};
    for (int w = 0; w < 4; ++w) {
      const auto word = static_cast<std::uint32_t>(std::stoul(hex.substr(8 * w, 8), nullptr, 16));
      std::memcpy(&a.s6_addr[4 * w], &word, 4);
    }
    inet_ntop(AF_INET6, &a, text, sizeof text);
    l.loopback = IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  l.address = text;
  return l;
}

std::vector<Listener> my_listeners() {
  const std::set<std::string> mine = my_socket_inodes();
  std::vector<Listener> found;
  for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      if (!(fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode)) {
        continue;
      }
      if (state == "0A" && mine.count(inode) != 0) found.push_back(decode(local));
    }
  }
  return found;
}

bool allowed(const Listener& l, const std::string& allow) {
  std::istringstream list(allow);
  for (std::string item; std::getline(list, item, ',');) {
    if (item == "loopback" ? l.loopback : item == l.address) return true;
  }
  return false;
}

// The name of an interface that is up with a non-loopback address, or "".
std::string external_interface() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
    const bool ip = i->ifa_addr != nullptr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6);
    if (ip && (i->ifa_flags & IFF_UP) != 0 && (i->ifa_flags & IFF_LOOPBACK) == 0) name = i->ifa_name;
  }
  freeifaddrs(list);
  return name;
}

int usage() {
  std::fprintf(stderr, "usage: listeners_check --allow loopback|ADDR[,ADDR...] [--expect-outside] [--hold FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string allow;
  std::string hold;
  bool expect_outside = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--allow" && i + 1 < argc) {
      allow = argv[++i];
    } else if (arg == "--hold" && i + 1 < argc) {
      hold = argv[++i];
    } else if (arg == "--expect-outside") {
      expect_outside = true;
    } else {
      return usage();
    }
  }
  if (allow.empty()) return usage();
  if (external_interface().empty()) {
    std::printf("skipped: this host has no interface with an address but loopback\n");
    return 77;
  }

  dt_comm* comm = nullptr;
  if (dt_comm_create(&comm, nullptr) != DT_OK) {
    std::fprintf(stderr, "dt_comm_create: %s\n", dt_error_last());
    return 1;
  }
  int rank = 0;
  dt_comm_rank(comm, &rank);
  std::int32_t ok = 1;
  std::int64_t shape[1] = {1};
  DLTensor flag = {&ok, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, nullptr, 0};
  if (dt_allreduce(comm, &flag, &flag, DT_MIN, nullptr, nullptr) != DT_OK) {
    std::fprintf(stderr, "allreduce: %s\n", dt_error_last());
    return 1;
  }

  int outside = 0;
  for (const Listener& l : my_listeners()) {
    const bool in = allowed(l, allow);
    outside += in ? 0 : 1;
    std::printf("rank %d listens on %s port %d%s\n", rank, l.address.c_str(), l.port, in ? "" : " (outside)");
  }
  ok = expect_outside ? outside > 0 : outside == 0;
  std::printf("rank %d: %d listener(s) outside %s: %s\n", rank, outside, allow.c_str(), ok ? "as expected" : "FAILED");
  std::fflush(stdout);
  if (!hold.empty()) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!std::filesystem::exists(hold) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!std::filesystem::exists(hold)) {
      std::printf("rank %d: %s did not appear within 30 s: FAILED\n", rank, hold.c_str());
      ok = 0;
    }
  }

  if (dt_allreduce(comm, &flag, &flag, DT_MIN, nullptr, nullptr) != DT_OK) {
    std::fprintf(stderr, "allreduce: %s\n", dt_error_last());
    return 1;
  }
  dt_comm_destroy(comm);
  return ok ? 0 : 1;
}
