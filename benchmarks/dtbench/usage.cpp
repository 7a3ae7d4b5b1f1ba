#include "usage.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench.h"
#include "command_line.hpp"

namespace dtbench {

std::unique_ptr<CLI::App> Usage::app() const {
  auto app = std::make_unique<CLI::App>(description, std::string("dtbench ") + command);
  dtrain::command_line::set_usage(*app, line);
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return app;
}

void Usage::error(const std::string& message) const {
  std::fprintf(stderr, "dtbench %s: %s\n\n%s\n(dtbench %s --help lists the options)\n", command, message.c_str(), line,
               command);
  std::exit(2);
}

CLI::Option* add_bytes(CLI::App& app, const std::string& flag, std::int64_t& bytes, std::int64_t lowest,
                       const std::string& help) {
  return app
      .add_option_function<std::string>(
          flag,
          [flag, &bytes, lowest](const std::string& value) {
            if (dtb_parse_bytes(value.c_str(), &bytes) != 0 || bytes < lowest) {
              throw CLI::ValidationError(flag, "bad value '" + value + "'");
            }
          },
          help)
      ->type_name("SIZE");
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
