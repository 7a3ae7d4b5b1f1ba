#include "bootstrap/host_port.hpp"

#include "base/error.hpp"

namespace dtrain::bootstrap {

namespace {

[[noreturn]] void bad(std::string_view what, std::string_view text, const std::string& why) {
  raise(DT_ERR_INVALID_ARGUMENT,
        std::string(what) + "='" + std::string(text) + "' is not a host:port address: " + why);
}

}  // namespace

std::string format_host_port(std::string_view host, int port) {
  std::string h(host);
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  return h + ":" + std::to_string(port);
}

std::string HostPort::to_string() const { return format_host_port(host, port); }

HostPort parse_host_port(std::string_view text, std::string_view what) {
  HostPort out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos) bad(what, text, "'[' without a closing ']'");
    out.host = std::string(text.substr(1, close - 1));
    if (close + 1 >= text.size() || text[close + 1] != ':') bad(what, text, "no ':port' after ']'");
    port_text = text.substr(close + 2);
  } else {
    std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) bad(what, text, "no ':port'");
    if (text.find(':') != colon) {
      bad(what, text, "an IPv6 address needs brackets, as in [::1]:29500");
    }
    out.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (out.host.empty()) bad(what, text, "the host is empty");
  if (port_text.empty()) bad(what, text, "the port is empty");
  long port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') bad(what, text, "the port '" + std::string(port_text) + "' is not a number");
    port = port * 10 + (c - '0');
    if (port > 65535) break;
  }
  if (port < 1 || port > 65535) bad(what, text, "the port is not in 1..65535");
  out.port = static_cast<int>(port);
  return out;
}

}  // namespace dtrain::bootstrap
