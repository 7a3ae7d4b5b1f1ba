// "host:port" addresses, as DTRAIN_STORE, MASTER_ADDR:MASTER_PORT and
// dt_comm_options.store give them.
#pragma once

#include <string>
#include <string_view>

namespace dtrain::bootstrap {

struct HostPort {
  std::string host;  // a name or a numeric address, IPv6 without brackets
  int port = 0;      // 1..65535

  // "host:port", with brackets around an IPv6 address: "[::1]:29500".
  std::string to_string() const;
};

// Parses "host:port", "[ipv6]:port". `what` names the source in errors
// ("DTRAIN_STORE", "options.store"). Throws DT_ERR_INVALID_ARGUMENT for an
// empty host, a missing or non-numeric port, a port outside 1..65535, or an
// IPv6 address without brackets.
HostPort parse_host_port(std::string_view text, std::string_view what);

// "host:port" for printing, with brackets when `host` contains ':'.
std::string format_host_port(std::string_view host, int port);

}  // namespace dtrain::bootstrap
