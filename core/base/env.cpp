#include "base/env.hpp"

#include <cerrno>
#include <cstdlib>

#include "base/error.hpp"

namespace dtrain::env {

std::optional<std::string> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::optional<int> get_int(const char* name, int min, int max) {
  auto text = get(name);
  if (!text) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str() || *end != '\0' || value < min || value > max) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + "='" + *text + "' is not an integer in [" +
                                       std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return static_cast<int>(value);
}

}  // namespace dtrain::env
