#include "failure_report.hpp"

#include <sys/wait.h>

#include <cstdio>

namespace dtrun {

namespace {

std::string row(const std::string& rank, const std::string& exit_code, const std::string& how) {
  char line[256];
  std::snprintf(line, sizeof line, "  %-6s %-9s %s\n", rank.c_str(), exit_code.c_str(), how.c_str());
  return line;
}

}  // namespace

std::string failure_report(const std::vector<RankProcess>& ranks, const Outcome& outcome, const std::string& node) {
  if (outcome.exit_code == 0) return "";
  std::string report = "dtrun: the job failed" + (node.empty() ? "" : " (" + node + ")") + "\n";
  if (outcome.remote_failure) report += "  root cause: " + *outcome.remote_failure + "\n";
  if (outcome.interrupted && outcome.first_failed_rank < 0) report += "  root cause: dtrun was interrupted\n";
  report += row("rank", "exit code", "what happened");
  for (const RankProcess& r : ranks) {
    if (WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0 && r.spawn_error.empty()) continue;
    std::string how = r.spawn_error.empty() ? describe_wait_status(r.wait_status) : r.spawn_error;
    if (r.rank == outcome.first_failed_rank) how += " (first failure)";
    report += row(std::to_string(r.rank), std::to_string(exit_code_of(r.wait_status)), how);
  }
  return report;
}

}  // namespace dtrun
