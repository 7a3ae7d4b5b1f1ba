#include "rank_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <stdexcept>

extern char** environ;

namespace dtrun {

namespace {

// The parent's environment with `overrides` replacing or adding entries.
std::vector<std::string> merged_environment(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    entries[entry.substr(0, entry.find('='))] = entry;
  }
  for (const std::string& entry : overrides) entries[entry.substr(0, entry.find('='))] = entry;
  std::vector<std::string> result;
  for (auto& [name, entry] : entries) result.push_back(entry);
  return result;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
}

// Runs a posix_spawn call, throwing what failed.
void check(int error, const char* what) {
  if (error != 0) throw std::runtime_error(std::string(what) + ": " + strerror(error));
}

}  // namespace

RankProcess spawn_rank(int rank, const std::vector<std::string>& command,
                       const std::vector<std::string>& environment, bool capture_output) {
  // posix_spawn, not fork: the child never runs dtrun's code, so it cannot
  // run dtrun's signal handler (which would write into dtrun's signal pipe
  // and look like a signal sent to dtrun) before it has exec'd.
  std::vector<std::string> env = merged_environment(environment);
  std::vector<std::string> argv_strings = command;
  std::vector<char*> envp = pointers_to(env);
  std::vector<char*> argv = pointers_to(argv_strings);
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (capture_output) {
    make_pipe(out);
    make_pipe(err);
  }

  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  check(posix_spawnattr_init(&attr), "posix_spawnattr_init");
  check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init");
  // Its own process group (so signals reach the rank's own children too),
  // no blocked signals, and default dispositions for the signals dtrun
  // handles or ignores.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) sigaddset(&defaults, sig);
  check(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF),
        "posix_spawnattr_setflags");
  check(posix_spawnattr_setpgroup(&attr, 0), "posix_spawnattr_setpgroup");
  check(posix_spawnattr_setsigmask(&attr, &none), "posix_spawnattr_setsigmask");
  check(posix_spawnattr_setsigdefault(&attr, &defaults), "posix_spawnattr_setsigdefault");
  if (capture_output) {
    check(posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO), "posix_spawn_file_actions_adddup2");
    check(posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO), "posix_spawn_file_actions_adddup2");
  }
  pid_t pid = -1;
  int error = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);

  RankProcess process;
  process.rank = rank;
  if (capture_output) {
    close(out[1]);
    close(err[1]);
  }
  if (error != 0) {
    // As a shell reports it: the rank "exited" 127 without running.
    if (capture_output) {
      close(out[0]);
      close(err[0]);
    }
    process.running = false;
    process.wait_status = W_EXITCODE(127, 0);
    process.spawn_error = "cannot execute " + command[0] + ": " + strerror(error);
    return process;
  }
  process.pid = pid;
  if (capture_output) {
    process.stdout_fd = out[0];
    process.stderr_fd = err[0];
  }
  return process;
}

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    const char* name = sigabbrev_np(sig);
    return std::string("was killed by ") + (name ? std::string("SIG") + name : "signal " + std::to_string(sig));
  }
  return "stopped unexpectedly";
}

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace dtrun
