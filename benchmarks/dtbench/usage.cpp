#include "usage.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace dtbench {

void Usage::error(const std::string& message) const {
  std::fprintf(stderr, "dtbench %s: %s\n\n%s", command, message.c_str(), text);
  std::exit(2);
}

int Usage::integer(const std::string& arg, const char* value, long lowest, long highest) const {
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (*value == '\0' || *end != '\0' || v < lowest || v > highest) error(arg + ": bad value");
  return static_cast<int>(v);
}

FILE* open_results(const Usage& usage, const std::string& path) {
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr)
    std::fprintf(stderr, "dtbench %s: cannot write %s: %s\n", usage.command, path.c_str(), std::strerror(errno));
  return out;
}

void close_results(FILE* out, const std::string& path) {
  std::fclose(out);
  std::printf("# results written to %s\n", path.c_str());
}

}  // namespace dtbench
