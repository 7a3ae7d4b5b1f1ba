// The two runs of --vs-mpi are separate jobs started one after the other: a
// rank of a dtrun job cannot host an mpirun job, and running them at once
// would have each measure the other. With --rounds R they alternate R times
// (dtrain, mpi, dtrain, mpi, ...), so that both sides get turns in the fast and
// slow phases of a shared machine; the comparison takes each side's best, and
// the ratio of the two runs of each round, which ran in the same phase.
#include "orchestrate.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "compare.hpp"

extern char** environ;

namespace dtbench {

namespace {

namespace fs = std::filesystem;

// The build tree's tool when it is there, else `name` looked up in PATH.
std::string tool(const char* built, const char* name) {
  if (built != nullptr && *built != '\0' && access(built, X_OK) == 0) return built;
  return name;
}

#ifdef DTBENCH_DTRUN
const char* const kDtrun = DTBENCH_DTRUN;
#else
const char* const kDtrun = nullptr;
#endif
#ifdef DTBENCH_MPI_PEER
const char* const kMpiPeer = DTBENCH_MPI_PEER;
#else
const char* const kMpiPeer = nullptr;
#endif
#ifdef DTBENCH_MPIEXEC
const char* const kMpiexec = DTBENCH_MPIEXEC;
#else
const char* const kMpiexec = nullptr;
#endif

// mpirun: $MPIRUN when set, else the one CMake found, else PATH's.
std::string mpirun() {
  const char* chosen = std::getenv("MPIRUN");
  return chosen != nullptr && *chosen != '\0' ? chosen : tool(kMpiexec, "mpirun");
}

// Where the runs write their results: `wanted`, made if need be, or a fresh
// temporary directory (empty path on failure, said on stderr).
fs::path results_directory(const std::string& wanted) {
  if (!wanted.empty()) {
    std::error_code error;
    fs::create_directories(wanted, error);
    if (error) {
      std::fprintf(stderr, "dtbench: cannot make %s: %s\n", wanted.c_str(), error.message().c_str());
      return {};
    }
    return wanted;
  }
  char pattern[] = "/tmp/dtbench.XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    std::fprintf(stderr, "dtbench: cannot make a temporary directory: %s\n", std::strerror(errno));
    return {};
  }
  return pattern;
}

// The options both runs take, as arguments.
std::vector<std::string> sweep_args(const dtb_options& o) {
  std::string ops;
  for (int op = 0; op < DTB_OP_COUNT; ++op) {
    if (o.ops & (1u << op)) ops += (ops.empty() ? "" : ",") + std::string(dtb_op_name(static_cast<dtb_op>(op)));
  }
  std::vector<std::string> args = {"--ops", ops,
                                   "--min-bytes", std::to_string(o.min_bytes),
                                   "--max-bytes", std::to_string(o.max_bytes),
                                   "--warmup", std::to_string(o.warmup),
                                   "--dtype", dtb_dtype_name(o.dtype)};
  if (o.iters > 0) {
    args.push_back("--iters");
    args.push_back(std::to_string(o.iters));
  }
  return args;
}

// Runs a command in the foreground, shown first as a shell would echo it.
int run(const std::vector<std::string>& command) {
  std::printf("+");
  for (const auto& word : command) std::printf(" %s", word.c_str());
  std::printf("\n");
  std::fflush(stdout);
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    std::perror(("dtbench: cannot start " + command[0]).c_str());
    return 127;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

int orchestrate(const dtb_options& o, int nproc, int rounds, const std::string& results_dir) {
  if (kMpiPeer == nullptr) {
    std::fprintf(stderr, "dtbench: --vs-mpi needs the MPI peer, and this build found no MPI\n");
    return 2;
  }
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) {
    std::fprintf(stderr, "dtbench: cannot find my own executable: %s\n", error.message().c_str());
    return 1;
  }
  const fs::path dir = results_directory(results_dir);
  if (dir.empty()) return 1;
  const std::vector<std::string> args = sweep_args(o);
  const std::string n = std::to_string(nproc);

  std::vector<std::string> dtrain = {tool(kDtrun, "dtrun"), "-n", n, "--no-tag-output", self.string(), "collectives"};
  dtrain.insert(dtrain.end(), args.begin(), args.end());

  // pml ucx with any transport and device: MPI over the same UCX that
  // libdtrain uses, so the comparison is between collective algorithms.
  std::vector<std::string> mpi = {mpirun(), "-np", n, "--oversubscribe"};
  if (geteuid() == 0) mpi.push_back("--allow-run-as-root");
  mpi.insert(mpi.end(), {"--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any",
                         "--bind-to", "none", tool(kMpiPeer, "mpi_peer")});
  mpi.insert(mpi.end(), args.begin(), args.end());

  // Each round's runs write their own JSON: the commands plus "--json PATH",
  // named dtrain-nN.json, or dtrain-nN-rK.json for round K of several.
  std::vector<std::string> dtrain_json, mpi_json;
  int status = 0;
  for (int r = 1; r <= rounds && status == 0; ++r) {
    const std::string suffix = "-n" + n + (rounds > 1 ? "-r" + std::to_string(r) : "") + ".json";
    dtrain_json.push_back(dir / ("dtrain" + suffix));
    mpi_json.push_back(dir / ("mpi" + suffix));
    if (rounds > 1) std::printf("#\n# round %d of %d\n", r, rounds);
    std::vector<std::string> d = dtrain, m = mpi;
    d.insert(d.end(), {"--json", dtrain_json.back()});
    m.insert(m.end(), {"--json", mpi_json.back()});
    status = run(d);
    if (status == 0) status = run(m);
  }
  if (status == 0) status = compare_files(dtrain_json, mpi_json, o.json_path);
  if (results_dir.empty()) fs::remove_all(dir, error);
  return status;
}

}  // namespace dtbench
