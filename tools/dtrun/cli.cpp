#include "cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace dtrun {

namespace {

const char kUsage[] =
    "usage: dtrun -n N [options] PROGRAM [ARGS...]\n"
    "\n"
    "Starts N local ranks of PROGRAM for libdtrain, with DTRAIN_RANK, DTRAIN_WORLD_SIZE,\n"
    "DTRAIN_LOCAL_RANK, DTRAIN_STORE and DTRAIN_AUTH_TOKEN set, and hosts their\n"
    "rendezvous store.\n"
    "\n"
    "options:\n"
    "  -n, --nproc N        number of ranks to start (required, >= 1)\n"
    "  --store HOST:PORT    use this running store instead of hosting one\n"
    "  --timeout SECONDS    the ranks' communication deadline (sets DTRAIN_TIMEOUT_MS)\n"
    "  --grace SECONDS      after a failure, how long ranks get between SIGTERM and\n"
    "                       SIGKILL (default 5)\n"
    "  --no-tag-output      do not prefix each output line with \"[rank] \"\n"
    "  -h, --help           show this help\n"
    "\n"
    "The job's secret is DTRAIN_AUTH_TOKEN when set, otherwise a fresh random token.\n"
    "SIGINT and SIGTERM are forwarded to every rank. When a rank exits non-zero or\n"
    "is killed by a signal, the others are stopped; dtrun names that rank and exits\n"
    "with its status (128 + signal number for a signal). dtrun exits 0 only when\n"
    "every rank exits 0, and 2 for bad arguments.\n";

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
    } else if (arg == "-n" || arg == "--nproc") {
      options.ranks = static_cast<int>(parse_integer(arg, value_of(arg), 1, 4096));
    } else if (arg == "--store") {
      std::string store = value_of(arg);
      auto colon = store.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == store.size()) {
        usage_error("--store needs HOST:PORT, not '" + store + "'");
      }
      parse_integer("--store port", store.substr(colon + 1), 1, 65535);
      options.store = store;
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
  return options;
}

}  // namespace dtrun
