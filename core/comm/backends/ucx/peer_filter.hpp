// Keeping connections from outside the job off UCX's TCP listeners.
//
// UCX offers no hook to refuse an incoming connection, so the kernel does
// it: a classic BPF socket filter (SO_ATTACH_FILTER, no privilege needed)
// on each listening socket UCX opened passes only packets whose source
// address is one of `allowed`; a connection attempt from any other address
// has its SYN dropped, as if nothing listened there. Sockets accepted from
// a filtered listener inherit the filter, which passes every segment but a
// SYN without looking further, so their traffic pays three instructions.
//
// UCX does not say which sockets are its own: the listeners are found as
// the listening TCP sockets among the descriptors that appeared while the
// worker was created, other than those bound to loopback (which every local
// process reaches anyway). A listening socket another thread of the process
// opens at that very moment would be filtered too.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace dtrain::comm::ucx {

// The file descriptors open in this process now.
std::set<int> open_descriptors();

// Filters the listening TCP sockets opened since `before` (see above) so
// that they take connections from `allowed` (numeric IPv4 and IPv6
// addresses) alone; returns how many it filtered. A socket whose filter
// cannot be attached is logged (warn) and left as it is.
std::size_t filter_new_listeners(const std::set<int>& before, const std::vector<std::string>& allowed);

// Attaches the filter to one socket of `family` (AF_INET or AF_INET6);
// false when it cannot (too many addresses for one program, or the kernel
// refuses).
bool filter_listener(int fd, int family, const std::vector<std::string>& allowed);

}  // namespace dtrain::comm::ucx
