// Errors inside libdtrain: a dtrain::Error carries the dt_status the C API
// returns and the message dt_error_last() shows.
#pragma once

#include <stdexcept>
#include <string>

#include "dtrain/status.h"

namespace dtrain {

class Error : public std::runtime_error {
 public:
  Error(dt_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  dt_status status() const noexcept { return status_; }

 private:
  dt_status status_;
};

// Throws Error(status, message).
[[noreturn]] void raise(dt_status status, const std::string& message);

// The thread-local message behind dt_error_last().
void set_last_error(const std::string& message);
const char* last_error() noexcept;

// True for the statuses after which a communicator is broken.
bool breaks_communicator(dt_status status) noexcept;

}  // namespace dtrain
