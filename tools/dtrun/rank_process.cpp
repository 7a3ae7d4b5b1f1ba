#include "rank_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
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
  std::vector<std::string> env = merged_environment(environment);
  std::vector<std::string> argv_strings = command;
  std::vector<char*> envp = pointers_to(env);
  std::vector<char*> argv = pointers_to(argv_strings);
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (capture_output) {
    make_pipe(out);
    make_pipe(err);
  }
  // The child reports a failed exec through this pipe; a successful exec
  // closes it (close-on-exec) with nothing written.
  int exec_status[2];
  make_pipe(exec_status);

  // fork, not posix_spawn, for the parent-death signal, which only the child
  // can ask for. Every signal stays blocked from before the fork until the
  // child has reset its dispositions, so the child never runs dtrun's
  // handler (which would write into dtrun's signal pipe and look like a
  // signal sent to dtrun).
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The rank dies with dtrun, however dtrun ends; one whose dtrun died
    // before this line never starts.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(127);
    // Its own process group, so that signals reach the rank's own children.
    setpgid(0, 0);
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) sigaction(sig, &fallback, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (capture_output) {
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
    }
    execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!write(exec_status[1], &error, sizeof error);
    _exit(127);
  }
  const int fork_error = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  close(exec_status[1]);
  int error = 0;
  if (pid < 0) {
    error = fork_error;
  } else {
    ssize_t got = -1;
    do {
      got = read(exec_status[0], &error, sizeof error);
    } while (got < 0 && errno == EINTR);
    if (got != static_cast<ssize_t>(sizeof error)) error = 0;
    if (error != 0) waitpid(pid, nullptr, 0);
  }
  close(exec_status[0]);

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
