#include "rank_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
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

}  // namespace

RankProcess spawn_rank(int rank, const std::vector<std::string>& command,
                       const std::vector<std::string>& environment, bool capture_output) {
  // Everything the child needs is prepared before fork(): between fork and
  // exec only async-signal-safe calls are allowed (dtrun runs a store thread).
  std::vector<std::string> env = merged_environment(environment);
  std::vector<std::string> argv_strings = command;
  std::vector<char*> envp = pointers_to(env);
  std::vector<char*> argv = pointers_to(argv_strings);
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (capture_output) {
    make_pipe(out);
    make_pipe(err);
  }

  const pid_t launcher = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    // The rank dies with dtrun, however dtrun ends; one whose dtrun died
    // before this line never starts.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(127);
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    if (capture_output) {
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
    }
    execvpe(argv[0], argv.data(), envp.data());
    const char* what = strerror(errno);
    const char prefix[] = "dtrun: cannot execute ";
    (void)!write(STDERR_FILENO, prefix, sizeof prefix - 1);
    (void)!write(STDERR_FILENO, argv[0], strlen(argv[0]));
    (void)!write(STDERR_FILENO, ": ", 2);
    (void)!write(STDERR_FILENO, what, strlen(what));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
  }
  // Also set the group from the parent, so that signalling the group works
  // even if the child has not run yet.
  setpgid(pid, pid);

  RankProcess process;
  process.rank = rank;
  process.pid = pid;
  if (capture_output) {
    close(out[1]);
    close(err[1]);
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
