// Reading configuration from the environment, with errors that name the variable.
#pragma once

#include <optional>
#include <string>

namespace dtrain::env {

// The variable's value, or nullopt when unset or empty.
std::optional<std::string> get(const char* name);

// The variable parsed as an int; nullopt when unset. A value that is not an
// integer in [min, max] throws DT_ERR_INVALID_ARGUMENT naming the variable.
std::optional<int> get_int(const char* name, int min, int max);

}  // namespace dtrain::env
