// Starting one rank: a child process in its own process group (so signals
// reach the rank's own children too), with its environment set and, when
// output is tagged, its stdout and stderr on pipes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace dtrun {

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  int stdout_fd = -1;  // -1 when the rank writes to dtrun's own stdout
  int stderr_fd = -1;
  int log_fd = -1;  // where its output is also written, untagged; -1: nowhere
  bool running = true;
  int wait_status = 0;      // as waitpid(2) reports it, once !running
  std::string spawn_error;  // why the program could not be started (then it never ran)
};

// Starts `command` (searched in PATH) with the current environment plus
// `environment` ("NAME=value" entries, overriding). A program that cannot be
// executed gives a RankProcess that is not running, with status 127 and
// spawn_error set; other failures (no pipes) throw std::runtime_error.
RankProcess spawn_rank(int rank, const std::vector<std::string>& command,
                       const std::vector<std::string>& environment, bool capture_output);

// "exited with code 3" or "was killed by SIGKILL".
std::string describe_wait_status(int wait_status);

// The exit code dtrun reports for a rank: its own, or 128 + signal.
int exit_code_of(int wait_status);

}  // namespace dtrun
