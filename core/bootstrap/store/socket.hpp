// Small POSIX socket helpers for the store: address formatting, listening
// and connecting with a deadline (descriptors are owned by base/fd.hpp's Fd).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <string>

#include "base/fd.hpp"
#include "bootstrap/deadline.hpp"

namespace dtrain::bootstrap::net {

using dtrain::Fd;

// "1.2.3.4:5" or "[::1]:5".
std::string describe(const sockaddr* address, socklen_t length);
// The socket's own and its peer's address, described; "?" when unknown.
std::string local_address(int fd);
std::string peer_address(int fd);
int local_port(int fd);
// The address a process on this machine connects to for a socket listening
// here: its own numeric address, or loopback when it is a wildcard.
std::string local_connect_host(int fd);
// True when the socket is bound to 0.0.0.0 or ::.
bool bound_to_wildcard(int fd);

// Raises this process's soft limit on open descriptors (RLIMIT_NOFILE) to
// `wanted`, never above the hard limit and never lowering it, and returns
// the soft limit in force afterwards.
std::size_t raise_descriptor_limit(std::size_t wanted);

void set_nonblocking(int fd);
// Requests and replies are small; sending them at once matters more than
// filling packets.
void set_nodelay(int fd);

// A non-blocking listening socket on host:port (port 0: one the kernel
// picks). `host` is a numeric address or a name; the first address that
// binds wins. Throws DT_ERR_INVALID_ARGUMENT when the host does not resolve
// or is not an address of this machine, DT_ERR_TRANSPORT for other failures
// (a port in use), naming the address.
Fd listen_tcp(const std::string& host, int port, int backlog);

// One attempt to connect to host:port within `deadline`, trying each address
// the host resolves to. Returns a connected non-blocking socket, or an
// invalid Fd with `error` saying why.
Fd connect_tcp(const std::string& host, int port, const Deadline& deadline, std::string* error);

}  // namespace dtrain::bootstrap::net
