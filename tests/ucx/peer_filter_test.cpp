// The socket filter that keeps connections from outside the job off UCX's
// listeners: a listener takes connections from the allowed sources, and a
// connection attempt from any other source is never answered.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <string>

#include "base/fd.hpp"
#include "comm/backends/ucx/peer_filter.hpp"

namespace dtrain::comm::ucx {
namespace {

struct Endpoint {
  sockaddr_storage address{};
  socklen_t length = 0;
};

Endpoint endpoint(int family, const char* text, int port) {
  Endpoint e;
  if (family == AF_INET) {
    auto& a = reinterpret_cast<sockaddr_in&>(e.address);
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, text, &a.sin_addr);
    e.length = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in6&>(e.address);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET6, text, &a.sin6_addr);
    e.length = sizeof a;
  }
  return e;
}

// A listening socket on `address`, port chosen by the kernel, and that port.
Fd listen_on(int family, const char* address, int* port) {
  Fd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  Endpoint e = endpoint(family, address, 0);
  if (!fd.valid() || bind(fd.get(), reinterpret_cast<sockaddr*>(&e.address), e.length) != 0 ||
      listen(fd.get(), 8) != 0 || getsockname(fd.get(), reinterpret_cast<sockaddr*>(&e.address), &e.length) != 0) {
    return Fd();
  }
  *port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in&>(e.address).sin_port
                                  : reinterpret_cast<sockaddr_in6&>(e.address).sin6_port);
  return fd;
}

// Whether a connection from `source` to `target`:`port` is established
// within `wait_ms`. A dropped SYN is retried only after a second, so a
// filtered listener leaves the attempt pending past a short wait.
bool connects(int family, const char* source, const char* target, int port, int wait_ms) {
  Fd fd(socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  Endpoint from = endpoint(family, source, 0);
  Endpoint to = endpoint(family, target, port);
  if (!fd.valid() || bind(fd.get(), reinterpret_cast<sockaddr*>(&from.address), from.length) != 0) {
    ADD_FAILURE() << "cannot bind a client to " << source << ": " << std::strerror(errno);
    return false;
  }
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&to.address), to.length) == 0) return true;
  if (errno != EINPROGRESS) return false;
  pollfd p{fd.get(), POLLOUT, 0};
  if (poll(&p, 1, wait_ms) != 1) return false;
  int error = 0;
  socklen_t length = sizeof error;
  return getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
}

TEST(UcxPeerFilter, Ipv4ListenerTakesOnlyAllowedSources) {
  int port = 0;
  Fd listener = listen_on(AF_INET, "127.0.0.1", &port);
  ASSERT_TRUE(listener.valid());
  // Both sources reach it before the filter.
  EXPECT_TRUE(connects(AF_INET, "127.0.0.2", "127.0.0.1", port, 2000));
  EXPECT_TRUE(connects(AF_INET, "127.0.0.3", "127.0.0.1", port, 2000));
  ASSERT_TRUE(filter_listener(listener.get(), AF_INET, {"10.1.2.3", "127.0.0.2", "::1"}));
  EXPECT_TRUE(connects(AF_INET, "127.0.0.2", "127.0.0.1", port, 2000));
  EXPECT_FALSE(connects(AF_INET, "127.0.0.3", "127.0.0.1", port, 300));
}

TEST(UcxPeerFilter, Ipv6ListenerTakesOnlyAllowedSources) {
  int port = 0;
  Fd listener = listen_on(AF_INET6, "::1", &port);
  if (!listener.valid()) GTEST_SKIP() << "no IPv6 loopback here";
  ASSERT_TRUE(filter_listener(listener.get(), AF_INET6, {"fd00::1", "::1", "127.0.0.1"}));
  EXPECT_TRUE(connects(AF_INET6, "::1", "::1", port, 2000));
  // Addresses that differ from the source in the last word or the first only.
  ASSERT_TRUE(filter_listener(listener.get(), AF_INET6, {"fd00::1", "::2", "1::1"}));
  EXPECT_FALSE(connects(AF_INET6, "::1", "::1", port, 300));
}

TEST(UcxPeerFilter, NewNonLoopbackListenersOnly) {
  int port = 0;
  Fd old_listener = listen_on(AF_INET, "127.0.0.1", &port);
  ASSERT_TRUE(old_listener.valid());
  const auto before = open_descriptors();
  EXPECT_EQ(before.count(old_listener.get()), 1u);
  Fd loopback_listener = listen_on(AF_INET, "127.0.0.1", &port);
  Fd not_listening(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(loopback_listener.valid());
  // Neither the older listener, nor one on loopback, nor a socket that
  // does not listen.
  EXPECT_EQ(filter_new_listeners(before, {"127.0.0.2"}), 0u);
  EXPECT_TRUE(connects(AF_INET, "127.0.0.3", "127.0.0.1", port, 2000));
  // A new listener on every address is one.
  Fd wildcard = listen_on(AF_INET, "0.0.0.0", &port);
  ASSERT_TRUE(wildcard.valid());
  EXPECT_EQ(filter_new_listeners(before, {"127.0.0.2"}), 1u);
  EXPECT_TRUE(connects(AF_INET, "127.0.0.2", "127.0.0.1", port, 2000));
  EXPECT_FALSE(connects(AF_INET, "127.0.0.3", "127.0.0.1", port, 300));
}

}  // namespace
}  // namespace dtrain::comm::ucx
