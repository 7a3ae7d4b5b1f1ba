// dtrun: starts the ranks of a libdtrain job on this machine.
#include <fcntl.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bootstrap/store/store_server.hpp"
#include "cli.hpp"
#include "failure_report.hpp"
#include "flight_analysis.hpp"
#include "flight_request.hpp"
#include "node_link.hpp"
#include "rank_process.hpp"
#include "supervisor.hpp"
#include "trace_merge.hpp"

namespace {

// A fresh secret for the job: 32 random bytes as hex.
std::string random_token() {
  unsigned char bytes[32];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) throw std::runtime_error("getrandom failed");
    got += static_cast<std::size_t>(n);
  }
  static const char hex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += hex[b >> 4];
    token += hex[b & 15];
  }
  return token;
}

bool is_set(const char* name) {
  const char* value = std::getenv(name);
  return value && *value;
}

// As torchrun does: ranks that each start a thread per core oversubscribe
// the machine many times over, so each gets one thread unless told otherwise.
std::vector<std::string> thread_defaults(int ranks) {
  cpu_set_t set;
  int cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (ranks <= cores) return {};
  std::vector<std::string> defaults;
  for (const char* name : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) {
    if (!is_set(name)) defaults.push_back(std::string(name) + "=1");
  }
  if (!defaults.empty()) {
    std::fprintf(stderr, "dtrun: warning: %d ranks on %d cores; setting OMP_NUM_THREADS=1 and "
                 "OPENBLAS_NUM_THREADS=1 for the ranks (set them to choose otherwise)\n", ranks, cores);
  }
  return defaults;
}

// The store a job's ranks meet at: hosted here (node 0, unless --store
// names one) or node 0's.
struct Store {
  std::unique_ptr<dtrain::bootstrap::StoreServer> server;
  std::string host;
  int port = 0;
  std::string address() const { return host + ":" + std::to_string(port); }
};

Store open_store(const dtrun::Options& options, const std::string& token) {
  Store store;
  if (options.store) {
    auto colon = options.store->rfind(':');
    store.host = options.store->substr(0, colon);
    store.port = std::stoi(options.store->substr(colon + 1));
  } else if (options.node_rank == 0) {
    // Bound to --master-addr, so other nodes reach it; otherwise loopback.
    store.server = std::make_unique<dtrain::bootstrap::StoreServer>(options.master_addr.value_or(""),
                                                                    options.master_port.value_or(0), token);
    store.host = store.server->local_host();
    store.port = store.server->port();
  } else {
    store.host = *options.master_addr;
    store.port = *options.master_port;
  }
  return store;
}

int open_log(const dtrun::Options& options, int rank, bool first_attempt) {
  if (!options.log_dir) return -1;
  std::string path = *options.log_dir + "/rank." + std::to_string(rank) + ".log";
  // Restarts append, so that the output of every attempt is kept.
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_APPEND | (first_attempt ? O_TRUNC : 0), 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + strerror(errno));
  return fd;
}

// One attempt: start this node's ranks and supervise them to the end.
dtrun::Outcome run_once(const dtrun::Options& options, const std::string& token, int attempt,
                        const std::vector<std::string>& extra_env, const std::string& flight_dir,
                        std::vector<dtrun::RankProcess>& ranks) {
  Store store = open_store(options, token);
  std::unique_ptr<dtrun::NodeLink> link;
  if (options.nnodes > 1) link = std::make_unique<dtrun::NodeLink>(store.host, store.port, token, options.node_rank);

  for (int local = 0; local < options.ranks; ++local) {
    int rank = options.node_rank * options.ranks + local;
    std::vector<std::string> env = {
        "DTRAIN_RANK=" + std::to_string(rank),
        "DTRAIN_WORLD_SIZE=" + std::to_string(options.world_size()),
        "DTRAIN_LOCAL_RANK=" + std::to_string(local),
        "DTRAIN_LOCAL_WORLD_SIZE=" + std::to_string(options.ranks),
        "DTRAIN_STORE=" + store.address(),
        "DTRAIN_AUTH_TOKEN=" + token,
        "DTRAIN_RESTART_COUNT=" + std::to_string(attempt),
        // torchrun's names, for programs written against it; MASTER_* name
        // the store the launcher hosts, as torchrun's agent store.
        "RANK=" + std::to_string(rank),
        "WORLD_SIZE=" + std::to_string(options.world_size()),
        "LOCAL_RANK=" + std::to_string(local),
        "LOCAL_WORLD_SIZE=" + std::to_string(options.ranks),
        "GROUP_RANK=" + std::to_string(options.node_rank),
        "MASTER_ADDR=" + store.host,
        "MASTER_PORT=" + std::to_string(store.port),
        // Output goes through a pipe; keep Python's line by line.
        "PYTHONUNBUFFERED=1",
    };
    if (options.timeout_seconds) {
      env.push_back("DTRAIN_TIMEOUT_MS=" + std::to_string(*options.timeout_seconds * 1000LL));
    }
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    bool capture = options.tag_output || options.log_dir;
    int log_fd = open_log(options, rank, attempt == 0);  // before the rank exists: a failure here orphans nothing
    ranks.push_back(dtrun::spawn_rank(rank, options.command, env, capture));
    ranks.back().log_fd = log_fd;
    if (!ranks.back().running) break;  // the program cannot be started: no point in starting more
  }

  dtrun::SuperviseOptions supervise_options;
  supervise_options.grace_seconds = options.grace_seconds;
  supervise_options.tag_output = options.tag_output;
  if (!flight_dir.empty()) {
    supervise_options.before_stop = [&](const std::vector<dtrun::RankProcess>& running) {
      dtrun::request_flight_records(flight_dir, running, 3.0);
    };
  }
  if (link) {
    supervise_options.on_failure = [&](int code, const std::string& what) { link->post(code, what); };
    supervise_options.remote_failure = [&] { return link->failure(); };
  }
  dtrun::Outcome outcome = dtrun::supervise(ranks, supervise_options);
  for (dtrun::RankProcess& r : ranks) {
    if (r.log_fd >= 0) close(r.log_fd);
  }
  if (link) {
    // Node 0's store must outlive the ranks of every node, which may still
    // use it while they finish.
    link->finished();
    if (store.server) link->wait_for_nodes(options.nnodes, std::chrono::seconds(30));
  }
  link.reset();
  if (store.server) store.server->stop();
  return outcome;
}

// After the job: the ranks' traces merged (DTRAIN_TRACE_FILE, one node),
// and a failed job's flight records analysed.
void finish_observations(const dtrun::Options& options, const dtrun::Outcome& outcome, const std::string& flight_dir) {
  if (is_set("DTRAIN_TRACE_FILE") && options.nnodes == 1) {
    const std::string path = std::getenv("DTRAIN_TRACE_FILE");
    try {
      const int files = dtrun::merge_traces(path, options.world_size());
      std::fprintf(stderr, "dtrun: merged the traces of %d of %d ranks into %s\n", files, options.world_size(),
                   path.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dtrun: %s\n", e.what());
    }
  }
  if (outcome.exit_code == 0 || flight_dir.empty()) return;
  bool found = false;
  const std::string analysis = dtrun::analyze_flight_records(flight_dir, &found);
  if (found) std::fprintf(stderr, "dtrun: %s", analysis.c_str());
}

int run(const dtrun::Options& options) {
  const char* given_token = std::getenv("DTRAIN_AUTH_TOKEN");
  if (options.nnodes > 1 && !(given_token && *given_token)) {
    throw std::runtime_error("--nnodes > 1 needs DTRAIN_AUTH_TOKEN set to one secret on every node");
  }
  const std::string token = given_token && *given_token ? given_token : random_token();
  if (options.log_dir && mkdir(options.log_dir->c_str(), 0755) != 0 && errno != EEXIST) {
    throw std::runtime_error("cannot make --log-dir " + *options.log_dir + ": " + strerror(errno));
  }
  std::vector<std::string> extra_env = thread_defaults(options.ranks);
  // Where the ranks write flight records: the environment's, or under --log-dir.
  std::string flight_dir = is_set("DTRAIN_FLIGHT_RECORDER_DIR") ? std::getenv("DTRAIN_FLIGHT_RECORDER_DIR") : "";
  if (flight_dir.empty() && options.log_dir) {
    flight_dir = *options.log_dir + "/flight";
    if (mkdir(flight_dir.c_str(), 0755) != 0 && errno != EEXIST) {
      throw std::runtime_error("cannot make " + flight_dir + ": " + strerror(errno));
    }
    extra_env.push_back("DTRAIN_FLIGHT_RECORDER_DIR=" + flight_dir);
  }
  const std::string node = options.nnodes > 1 ? "node " + std::to_string(options.node_rank) + " of " +
                                                    std::to_string(options.nnodes)
                                              : "";

  dtrun::install_signal_handlers();
  for (int attempt = 0;; ++attempt) {
    std::vector<dtrun::RankProcess> ranks;
    dtrun::Outcome outcome = run_once(options, token, attempt, extra_env, flight_dir, ranks);
    bool restart = outcome.exit_code != 0 && !outcome.interrupted && attempt < options.max_restarts;
    if (!restart) {
      std::fputs(dtrun::failure_report(ranks, outcome, node).c_str(), stderr);
      finish_observations(options, outcome, flight_dir);
      return outcome.exit_code;
    }
    std::fprintf(stderr, "dtrun: restarting every rank (restart %d of %d) because rank %d failed\n", attempt + 1,
                 options.max_restarts, outcome.first_failed_rank);
  }
}

}  // namespace

int main(int argc, char** argv) {
  dtrun::Options options = dtrun::parse_command_line(argc, argv);
  if (options.analyze) {
    bool found = false;
    std::fputs(dtrun::analyze_flight_records(*options.analyze, &found).c_str(), stdout);
    return found ? 0 : 1;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dtrun: %s\n", e.what());
    return 1;
  }
}
