// dtrun's command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dtrun {

struct Options {
  int ranks = 0;
  std::optional<std::string> store;       // external store: ranks connect there, dtrun hosts none
  std::optional<int> timeout_seconds;     // the ranks' communication deadline (DTRAIN_TIMEOUT_MS)
  double grace_seconds = 5.0;             // SIGTERM to SIGKILL
  bool tag_output = true;
  std::vector<std::string> command;       // program and its arguments
};

// Parses argv. On --help prints the usage and exits 0; on a bad argument
// prints what is wrong and the usage to stderr and exits 2.
Options parse_command_line(int argc, char** argv);

}  // namespace dtrun
