#include "bootstrap/store/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "base/error.hpp"
#include "bootstrap/host_port.hpp"

namespace dtrain::bootstrap::net {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// Resolves host:port for TCP; on failure returns null and sets `error`.
AddrInfoPtr resolve(const std::string& host, int port, bool passive, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* result = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &result);
  if (rc != 0) {
    *error = "cannot resolve '" + host + "': " + gai_strerror(rc);
    return nullptr;
  }
  return AddrInfoPtr(result);
}

}  // namespace

std::string describe(const sockaddr* address, socklen_t length) {
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(address, length, host, sizeof host, service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) !=
      0) {
    return "?";
  }
  return format_host_port(host, std::atoi(service));
}

std::string local_address(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
  return describe(reinterpret_cast<sockaddr*>(&address), length);
}

std::string peer_address(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "?";
  return describe(reinterpret_cast<sockaddr*>(&address), length);
}

int local_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  if (address.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return 0;
}

std::string local_connect_host(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "127.0.0.1";
  if (bound_to_wildcard(fd)) return address.ss_family == AF_INET6 ? "::1" : "127.0.0.1";
  char host[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) {
    return "127.0.0.1";
  }
  return host;
}

bool bound_to_wildcard(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return false;
  if (address.ss_family == AF_INET) {
    return reinterpret_cast<sockaddr_in*>(&address)->sin_addr.s_addr == htonl(INADDR_ANY);
  }
  if (address.ss_family == AF_INET6) {
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr);
  }
  return false;
}

std::size_t raise_descriptor_limit(std::size_t wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  const rlim_t target = limit.rlim_max == RLIM_INFINITY ? static_cast<rlim_t>(wanted)
                                                         : std::min<rlim_t>(wanted, limit.rlim_max);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < target) {
    rlimit raised{target, limit.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit.rlim_cur = target;
  }
  return limit.rlim_cur == RLIM_INFINITY ? wanted : static_cast<std::size_t>(limit.rlim_cur);
}

void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    raise(DT_ERR_TRANSPORT, "cannot make a socket non-blocking: " + errno_text(errno));
  }
}

void set_nodelay(int fd) {
  int one = 1;
  // Only latency depends on it, so a failure is not an error.
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Fd listen_tcp(const std::string& host, int port, int backlog) {
  const std::string where = format_host_port(host, port);
  std::string error;
  AddrInfoPtr addresses = resolve(host, port, true, &error);
  if (!addresses) raise(DT_ERR_INVALID_ARGUMENT, "the store cannot listen on " + where + ": " + error);
  int last_errno = 0;
  for (addrinfo* a = addresses.get(); a != nullptr; a = a->ai_next) {
    Fd fd(socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      last_errno = errno;
      continue;
    }
    // A restarted job may find its port in TIME_WAIT from the previous run.
    int one = 1;
    (void)setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || listen(fd.get(), backlog) != 0) {
      last_errno = errno;
      continue;
    }
    return fd;
  }
  if (last_errno == EADDRNOTAVAIL) {
    raise(DT_ERR_INVALID_ARGUMENT, "the store cannot listen on " + where + ": " + host +
                                       " is not an address of this machine");
  }
  raise(DT_ERR_TRANSPORT, "the store cannot listen on " + where + ": " + errno_text(last_errno));
}

Fd connect_tcp(const std::string& host, int port, const Deadline& deadline, std::string* error) {
  AddrInfoPtr addresses = resolve(host, port, false, error);
  if (!addresses) return Fd();
  for (addrinfo* a = addresses.get(); a != nullptr; a = a->ai_next) {
    Fd fd(socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      *error = errno_text(errno);
      continue;
    }
    if (connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        *error = errno_text(errno);
        continue;
      }
      pollfd p{fd.get(), POLLOUT, 0};
      int rc = 0;
      do {
        rc = poll(&p, 1, deadline.poll_timeout_ms());
      } while (rc < 0 && errno == EINTR);
      if (rc == 0) {
        *error = "connection attempt timed out";
        continue;
      }
      int so_error = 0;
      socklen_t length = sizeof so_error;
      if (rc < 0 || getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &length) != 0) {
        *error = errno_text(errno);
        continue;
      }
      if (so_error != 0) {
        *error = errno_text(so_error);
        continue;
      }
    }
    set_nodelay(fd.get());
    return fd;
  }
  return Fd();
}

}  // namespace dtrain::bootstrap::net
