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

bool write_results(const char* command, const std::string& path, const Json& doc) {
  const std::string text = doc.dump(2) + "\n";
  FILE* out = std::fopen(path.c_str(), "w");
  const bool written = out != nullptr && std::fwrite(text.data(), 1, text.size(), out) == text.size();
  if (out == nullptr || std::fclose(out) != 0 || !written) {
    std::fprintf(stderr, "dtbench %s: cannot write %s: %s\n", command, path.c_str(), std::strerror(errno));
    return false;
  }
  std::printf("# results written to %s\n", path.c_str());
  return true;
}

}  // namespace dtbench
