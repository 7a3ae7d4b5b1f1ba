#include "cli.hpp"

#include <string>

#include "command_line.hpp"

namespace dtrun {

namespace {

const char kDescription[] =
    "Starts N ranks of PROGRAM on this machine for libdtrain, and hosts their\n"
    "rendezvous store. Each rank gets DTRAIN_RANK, DTRAIN_WORLD_SIZE,\n"
    "DTRAIN_LOCAL_RANK, DTRAIN_LOCAL_WORLD_SIZE, DTRAIN_STORE, DTRAIN_AUTH_TOKEN and\n"
    "DTRAIN_RESTART_COUNT, and torchrun's RANK, LOCAL_RANK, WORLD_SIZE,\n"
    "LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and MASTER_PORT (the store's address).";

const char kFooter[] =
    "The job's secret is DTRAIN_AUTH_TOKEN when set, otherwise a fresh random token\n"
    "(several nodes need it set). When this node's ranks outnumber its cores,\n"
    "OMP_NUM_THREADS and OPENBLAS_NUM_THREADS default to 1, with a warning. Output\n"
    "is passed on a line at a time, and at once up to a carriage return (progress\n"
    "bars). SIGINT and SIGTERM are forwarded to every rank. When a rank exits\n"
    "non-zero or is killed by a signal, the others, on every node, are stopped;\n"
    "dtrun names that rank, prints a table of every rank that failed, and exits\n"
    "with its status (128 + signal number for a signal; 127 for a program that\n"
    "cannot be executed). dtrun exits 0 only when every rank exits 0, and 2 for\n"
    "bad arguments.\n"
    "\n"
    "With DTRAIN_FLIGHT_RECORDER_DIR set (or --log-dir), a failed job's ranks are\n"
    "first asked for their flight records (SIGUSR1, to ranks whose libdtrain\n"
    "listens for it), and their analysis is printed. With DTRAIN_TRACE_FILE=PATH,\n"
    "the ranks' traces (PATH.rankR) are merged into PATH at the end (one node).\n";

// HOST:PORT with a port in [1, 65535].
const CLI::Validator kHostPort(
    [](std::string& text) -> std::string {
      const auto colon = text.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() ||
          !CLI::Range(1, 65535)(text.substr(colon + 1)).empty()) {
        return "needs HOST:PORT, not '" + text + "'";
      }
      return "";
    },
    "");

// Seconds in [0, 86400]; NaN is not in it.
const CLI::Validator kSeconds(
    [](std::string& text) -> std::string {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value) || !(value >= 0 && value <= 86400)) {
        return "needs a number of seconds in [0, 86400], not '" + text + "'";
      }
      return "";
    },
    "");

}  // namespace

Options parse_command_line(int argc, char** argv) {
  Options options;
  CLI::App app(kDescription, "dtrun");
  dtrain::command_line::set_usage(app, "usage: dtrun -n N [options] PROGRAM [ARGS...]");
  app.footer(kFooter);
  // dtrun's options end at PROGRAM (or "--"): what follows is the program's.
  app.prefix_command();
  // An option given twice takes its last value, as it always has.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string master_addr, store, analyze, log_dir;
  int master_port = 0, timeout = 0;
  app.add_option("-n,--nproc,--nproc-per-node,--nproc_per_node", options.ranks,
                 "ranks to start on this node (required, >= 1)")
      ->type_name("N")
      ->check(CLI::Range(1, 4096));
  app.add_option("--nnodes", options.nnodes,
                 "nodes in the job (default 1); start one dtrun per node,\n"
                 "each with the same -n, --master-addr, --master-port and\n"
                 "DTRAIN_AUTH_TOKEN")
      ->type_name("M")
      ->check(CLI::Range(1, 65536));
  app.add_option("--node-rank,--node_rank", options.node_rank,
                 "this node's place, 0 to M-1 (default 0); node 0 hosts the\n"
                 "store, and its ranks are 0 to N-1, node K's K*N to K*N+N-1")
      ->type_name("K")
      ->check(CLI::Range(0, 65535));
  auto* addr = app.add_option("--master-addr,--master_addr", master_addr, "node 0's address, where it hosts the store")
                   ->type_name("HOST")
                   ->check(CLI::Validator([](std::string& s) { return s.empty() ? "needs a host" : ""; }, ""));
  auto* port = app.add_option("--master-port,--master_port", master_port,
                              "the store's port (default with one node: any free one)")
                   ->type_name("PORT")
                   ->check(CLI::Range(1, 65535));
  auto* store_option = app.add_option("--store", store, "use this running store instead of hosting one (one node)")
                           ->type_name("HOST:PORT")
                           ->check(kHostPort);
  auto* timeout_option =
      app.add_option("--timeout", timeout, "the ranks' communication deadline (sets DTRAIN_TIMEOUT_MS)")
          ->type_name("SECONDS")
          ->check(CLI::Range(1, 2000000));
  app.add_option("--grace", options.grace_seconds,
                 "after a failure, how long ranks get between SIGTERM and\n"
                 "SIGKILL (default 5)")
      ->type_name("SECONDS")
      ->check(kSeconds);
  app.add_option("--max-restarts,--max_restarts", options.max_restarts,
                 "after a failure, stop every rank and start them all again,\n"
                 "up to R times (default 0; one node only)")
      ->type_name("R")
      ->check(CLI::Range(0, 1000));
  auto* log_dir_option = app.add_option("--log-dir,--log_dir", log_dir,
                                        "also write each rank's output, untagged, to DIR/rank.R.log,\n"
                                        "and have the ranks write flight records to DIR/flight\n"
                                        "(DTRAIN_FLIGHT_RECORDER_DIR, unless set)")
                             ->type_name("DIR");
  auto* analyze_option = app.add_option("--analyze", analyze,
                                        "read the flight records in DIR and say which rank is\n"
                                        "behind and on which operation; starts nothing (exit 0,\n"
                                        "or 1 when DIR holds no record)")
                             ->type_name("DIR");
  app.add_flag_callback(
      "--no-tag-output", [&options] { options.tag_output = false; }, "do not prefix each output line with \"[rank] \"");
  dtrain::command_line::parse(app, argc, argv);

  if (*analyze_option) {
    options.analyze = analyze;
    return options;
  }
  if (*addr) options.master_addr = master_addr;
  if (*port) options.master_port = master_port;
  if (*store_option) options.store = store;
  if (*timeout_option) options.timeout_seconds = timeout;
  if (*log_dir_option) options.log_dir = log_dir;
  options.command = app.remaining();
  // Options dtrun does not know stay ahead of PROGRAM; "--" ends dtrun's own.
  if (!options.command.empty() && options.command.front() == "--") {
    options.command.erase(options.command.begin());
  } else if (!options.command.empty() && options.command.front().rfind('-', 0) == 0) {
    dtrain::command_line::fail(app, "unknown option " + options.command.front());
  }

  const auto usage_error = [&app](const std::string& message) { dtrain::command_line::fail(app, message); };
  if (options.ranks == 0) usage_error("-n N is required");
  if (options.command.empty()) usage_error("no PROGRAM given");
  if (options.node_rank >= options.nnodes) {
    usage_error("--node-rank " + std::to_string(options.node_rank) + " is not below --nnodes " +
                std::to_string(options.nnodes));
  }
  if (options.store && (options.master_addr || options.master_port)) {
    usage_error("--store and --master-addr/--master-port both name the store; give one");
  }
  if (options.nnodes > 1) {
    if (!options.master_addr || !options.master_port) usage_error("--nnodes > 1 needs --master-addr and --master-port");
    // Restarting means every node starting again at once, which needs an
    // agreement between the dtruns that they do not have yet.
    if (options.max_restarts > 0) usage_error("--max-restarts works with one node only");
  } else if (options.master_addr && !options.master_port) {
    usage_error("--master-addr needs --master-port");
  }
  return options;
}

}  // namespace dtrun
