// dtrun's command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dtrun {

struct Options {
  int ranks = 0;                          // ranks on this node (-n, --nproc-per-node)
  int nnodes = 1;                         // nodes in the job, each running its own dtrun
  int node_rank = 0;                      // this node's place: its ranks are node_rank * ranks + local
  std::optional<std::string> master_addr;  // where node 0 hosts the store (its own address)
  std::optional<int> master_port;
  std::optional<std::string> store;       // external store: ranks connect there, dtrun hosts none
  std::optional<int> timeout_seconds;     // the ranks' communication deadline (DTRAIN_TIMEOUT_MS)
  double grace_seconds = 5.0;             // SIGTERM to SIGKILL
  bool tag_output = true;
  std::optional<std::string> log_dir;     // a file per rank with its output
  int max_restarts = 0;                   // restarts of every rank after a failure
  std::vector<std::string> command;       // program and its arguments
  std::optional<std::string> analyze;     // --analyze DIR: read flight records, run nothing

  int world_size() const { return nnodes * ranks; }
};

// Parses argv. On --help prints the usage and exits 0; on a bad argument
// prints what is wrong and the usage to stderr and exits 2.
Options parse_command_line(int argc, char** argv);

}  // namespace dtrun
