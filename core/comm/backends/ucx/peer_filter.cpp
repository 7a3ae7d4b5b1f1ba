#include "comm/backends/ucx/peer_filter.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "base/log.hpp"

namespace dtrain::comm::ucx {

namespace {

constexpr std::uint32_t kAccept = 0xffffffffu;  // keep the whole packet
constexpr std::uint32_t kDrop = 0;

sock_filter load_word(std::uint32_t network_offset) {
  // SKF_NET_OFF: relative to the IP header; TCP has already pulled it
  // from the packet's data when the socket's filter runs.
  return BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(SKF_NET_OFF) + network_offset);
}

// Segments without SYN pass at once: accepted sockets inherit the filter,
// and their data should not pay for it; a connection can only begin with a
// SYN, which is checked. Then the source address against each allowed one,
// one block per address so that every jump stays short: IPv4 `ld src;
// jeq a, 0, 1; ret accept; ...`, IPv6 the same over the address's four words.
std::vector<sock_filter> program(int family, const std::vector<std::string>& allowed) {
  std::vector<sock_filter> code;
  code.push_back(BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 13));  // the TCP flags: the packet's data is the TCP header
  code.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x02, 1, 0));  // SYN
  code.push_back(BPF_STMT(BPF_RET | BPF_K, kAccept));
  if (family == AF_INET) {
    code.push_back(load_word(12));  // the IPv4 source address
    for (const std::string& text : allowed) {
      in_addr a{};
      if (inet_pton(AF_INET, text.c_str(), &a) != 1) continue;
      code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(a.s_addr), 0, 1));
      code.push_back(BPF_STMT(BPF_RET | BPF_K, kAccept));
    }
  } else {
    for (const std::string& text : allowed) {
      in6_addr a{};
      if (inet_pton(AF_INET6, text.c_str(), &a) != 1) continue;
      for (std::uint8_t word = 0; word < 4; ++word) {
        std::uint32_t value = 0;
        std::memcpy(&value, &a.s6_addr[4 * word], 4);
        code.push_back(load_word(8 + 4u * word));  // the IPv6 source address, word by word
        // On a mismatch, on to the next address's block.
        const auto skip = static_cast<std::uint8_t>(7 - 2 * word);
        code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(value), 0, skip));
      }
      code.push_back(BPF_STMT(BPF_RET | BPF_K, kAccept));
    }
  }
  code.push_back(BPF_STMT(BPF_RET | BPF_K, kDrop));
  return code;
}

bool loopback(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in&>(address).sin_addr.s_addr) >> 24) == 127;
  }
  return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr);
}

// A listening TCP socket's bound address, or family AF_UNSPEC when `fd` is
// something else.
sockaddr_storage listening_address(int fd) {
  sockaddr_storage address{};
  int value = 0;
  socklen_t length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) != 0 || value == 0) return {};
  length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &length) != 0 || value != SOCK_STREAM) return {};
  length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return {};
  if (address.ss_family != AF_INET && address.ss_family != AF_INET6) return {};
  return address;
}

}  // namespace

std::set<int> open_descriptors() {
  std::set<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const int fd = std::atoi(entry->d_name);
    if (fd != own) fds.insert(fd);
  }
  closedir(dir);
  return fds;
}

bool filter_listener(int fd, int family, const std::vector<std::string>& allowed) {
  std::vector<sock_filter> code = program(family, allowed);
  if (code.size() > BPF_MAXINSNS) {
    errno = E2BIG;
    return false;
  }
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(code.size());
  prog.filter = code.data();
  return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) == 0;
}

std::size_t filter_new_listeners(const std::set<int>& before, const std::vector<std::string>& allowed) {
  std::size_t filtered = 0;
  for (int fd : open_descriptors()) {
    if (before.count(fd) != 0) continue;
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    const sockaddr_storage address = listening_address(fd);
    if (address.ss_family == AF_UNSPEC || loopback(address)) continue;
    // An IPv6 socket bound to every address may take IPv4 packets too,
    // whose source the IPv6 program would misread.
    if (address.ss_family == AF_INET6 &&
        IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr)) {
      continue;
    }
    if (filter_listener(fd, address.ss_family, allowed)) {
      ++filtered;
    } else {
      DT_LOG(warn) << "UCX: cannot restrict listening socket " << fd << " to the job's " << allowed.size()
                   << " host address(es): " << std::strerror(errno) << "; it takes connections from anywhere";
    }
  }
  return filtered;
}

}  // namespace dtrain::comm::ucx
