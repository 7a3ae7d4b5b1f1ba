#include "cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dtrun {

namespace {

const char kUsage[] =
    "usage: dtrun -n N [options] PROGRAM [ARGS...]\n"
    "\n"
    "Starts N ranks of PROGRAM on this machine for libdtrain, and hosts their\n"
    "rendezvous store. Each rank gets DTRAIN_RANK, DTRAIN_WORLD_SIZE,\n"
    "DTRAIN_LOCAL_RANK, DTRAIN_LOCAL_WORLD_SIZE, DTRAIN_STORE, DTRAIN_AUTH_TOKEN and\n"
    "DTRAIN_RESTART_COUNT, and torchrun's RANK, LOCAL_RANK, WORLD_SIZE,\n"
    "LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and MASTER_PORT (the store's address).\n"
    "\n"
    "options:\n"
    "  -n, --nproc, --nproc-per-node N\n"
    "                       ranks to start on this node (required, >= 1)\n"
    "  --nnodes M           nodes in the job (default 1); start one dtrun per node,\n"
    "                       each with the same -n, --master-addr, --master-port and\n"
    "                       DTRAIN_AUTH_TOKEN\n"
    "  --node-rank K        this node's place, 0 to M-1 (default 0); node 0 hosts the\n"
    "                       store, and its ranks are 0 to N-1, node K's K*N to K*N+N-1\n"
    "  --master-addr HOST   node 0's address, where it hosts the store\n"
    "  --master-port PORT   the store's port (default with one node: any free one)\n"
    "  --store HOST:PORT    use this running store instead of hosting one (one node)\n"
    "  --timeout SECONDS    the ranks' communication deadline (sets DTRAIN_TIMEOUT_MS)\n"
    "  --grace SECONDS      after a failure, how long ranks get between SIGTERM and\n"
    "                       SIGKILL (default 5)\n"
    "  --max-restarts R     after a failure, stop every rank and start them all again,\n"
    "                       up to R times (default 0; one node only)\n"
    "  --log-dir DIR        also write each rank's output, untagged, to DIR/rank.R.log,\n"
    "                       and have the ranks write flight records to DIR/flight\n"
    "                       (DTRAIN_FLIGHT_RECORDER_DIR, unless set)\n"
    "  --analyze DIR        read the flight records in DIR and say which rank is\n"
    "                       behind and on which operation; starts nothing (exit 0,\n"
    "                       or 1 when DIR holds no record)\n"
    "  --no-tag-output      do not prefix each output line with \"[rank] \"\n"
    "  -h, --help           show this help\n"
    "\n"
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

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "dtrun: %s\n\n%s", message.c_str(), kUsage);
  std::exit(2);
}

long parse_integer(const std::string& option, const std::string& text, long min, long max) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < min || value > max) {
    usage_error(option + " needs an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                "], not '" + text + "'");
  }
  return value;
}

double parse_seconds(const std::string& option, const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0) || value > 86400) {
    usage_error(option + " needs a number of seconds in [0, 86400], not '" + text + "'");
  }
  return value;
}

}  // namespace

Options parse_command_line(int argc, char** argv) {
  Options options;
  int i = 1;
  auto value_of = [&](const std::string& option) -> std::string {
    if (i + 1 >= argc) usage_error(option + " needs a value");
    return argv[++i];
  };
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "-n" || arg == "--nproc" || arg == "--nproc-per-node" || arg == "--nproc_per_node") {
      options.ranks = static_cast<int>(parse_integer(arg, value_of(arg), 1, 4096));
    } else if (arg == "--nnodes") {
      options.nnodes = static_cast<int>(parse_integer(arg, value_of(arg), 1, 65536));
    } else if (arg == "--node-rank" || arg == "--node_rank") {
      options.node_rank = static_cast<int>(parse_integer(arg, value_of(arg), 0, 65535));
    } else if (arg == "--master-addr" || arg == "--master_addr") {
      options.master_addr = value_of(arg);
      if (options.master_addr->empty()) usage_error(arg + " needs a host");
    } else if (arg == "--master-port" || arg == "--master_port") {
      options.master_port = static_cast<int>(parse_integer(arg, value_of(arg), 1, 65535));
    } else if (arg == "--store") {
      std::string store = value_of(arg);
      auto colon = store.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == store.size()) {
        usage_error("--store needs HOST:PORT, not '" + store + "'");
      }
      parse_integer("--store port", store.substr(colon + 1), 1, 65535);
      options.store = store;
    } else if (arg == "--max-restarts" || arg == "--max_restarts") {
      options.max_restarts = static_cast<int>(parse_integer(arg, value_of(arg), 0, 1000));
    } else if (arg == "--log-dir" || arg == "--log_dir") {
      options.log_dir = value_of(arg);
    } else if (arg == "--analyze") {
      options.analyze = value_of(arg);
      return options;
    } else if (arg == "--timeout") {
      options.timeout_seconds = static_cast<int>(parse_integer(arg, value_of(arg), 1, 2000000));
    } else if (arg == "--grace") {
      options.grace_seconds = parse_seconds(arg, value_of(arg));
    } else if (arg == "--no-tag-output") {
      options.tag_output = false;
    } else if (arg == "--") {
      ++i;
      break;
    } else if (!arg.empty() && arg[0] == '-') {
      usage_error("unknown option " + arg);
    } else {
      break;
    }
  }
  for (; i < argc; ++i) options.command.emplace_back(argv[i]);
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
