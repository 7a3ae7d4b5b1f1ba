#include "base/error.hpp"

namespace dtrain {

namespace {
thread_local std::string t_last_error;
}

void raise(dt_status status, const std::string& message) { throw Error(status, message); }

void set_last_error(const std::string& message) { t_last_error = message; }

const char* last_error() noexcept { return t_last_error.c_str(); }

bool breaks_communicator(dt_status status) noexcept {
  return status == DT_ERR_TIMEOUT || status == DT_ERR_REMOTE || status == DT_ERR_TRANSPORT;
}

}  // namespace dtrain
