// Watches the ranks of a job until all have exited: copies their output,
// forwards SIGINT and SIGTERM, and fails fast — when one rank fails, the
// others get SIGTERM and, after the grace period, SIGKILL.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rank_process.hpp"

namespace dtrun {

// A failure another node's dtrun reported.
struct RemoteFailure {
  int exit_code;
  std::string what;  // "node 1: rank 3 was killed by SIGKILL"
};

struct SuperviseOptions {
  double grace_seconds = 5.0;
  bool tag_output = true;
  // Called once, when the first of these ranks fails: what failed, for the
  // other nodes. May be empty.
  std::function<void(int exit_code, const std::string& what)> on_failure;
  // Called when a byte is written to wake_fd(): a failure elsewhere that
  // stops these ranks, or nullopt. May be empty.
  std::function<std::optional<RemoteFailure>()> remote_failure;
  // Called once after a failure, before the ranks still running are
  // stopped. May be empty.
  std::function<void(const std::vector<RankProcess>& ranks)> before_stop;
};

struct Outcome {
  int exit_code = 0;           // 0, or the first failure's status
  int first_failed_rank = -1;  // -1: none here (or the failure was remote)
  std::optional<std::string> remote_failure;
  bool interrupted = false;    // SIGINT or SIGTERM reached dtrun
};

// Installs dtrun's signal handling. Call before starting any rank, so that
// no child's exit goes unnoticed.
void install_signal_handlers();

// Writing a byte here from any thread makes supervise() ask
// options.remote_failure.
int wake_fd();

// Runs until every rank has exited. Ranks not running on entry (a program
// that could not be started) count as failed at once.
Outcome supervise(std::vector<RankProcess>& ranks, const SuperviseOptions& options);

}  // namespace dtrun
