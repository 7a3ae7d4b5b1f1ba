#include "supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "line_tagger.hpp"

namespace dtrun {

namespace {

using Clock = std::chrono::steady_clock;

// Signals become bytes on this pipe, read by the poll loop (the self-pipe
// trick): the handler itself does nothing but write(2).
int g_signal_pipe[2] = {-1, -1};

// The byte wake_fd() readers see for "another node failed" (no signal is 0).
constexpr unsigned char kWakeByte = 0;

void on_signal(int sig) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(sig);
  (void)!write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

// Whether process `pid` is stopped (SIGSTOP, a debugger): state T or t in
// /proc/<pid>/stat, after the command name in parentheses.
bool is_stopped(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* file = std::fopen(path, "r");
  if (file == nullptr) return false;
  char text[512] = {};
  const std::size_t n = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  const char* end = std::strrchr(text, ')');
  return end != nullptr && end + 2 < text + n && (end[2] == 'T' || end[2] == 't');
}

// Output of a rank still being read.
struct Stream {
  int fd;
  std::unique_ptr<LineTagger> tagger;
};

class Supervisor {
 public:
  Supervisor(std::vector<RankProcess>& ranks, const SuperviseOptions& options)
      : ranks_(ranks),
        options_(options),
        grace_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.grace_seconds))),
        killed_(ranks.size(), Kill::no) {
    for (RankProcess& r : ranks_) {
      std::string prefix = options.tag_output ? "[" + std::to_string(r.rank) + "] " : "";
      if (r.stdout_fd >= 0) streams_.push_back({r.stdout_fd, std::make_unique<LineTagger>(prefix, STDOUT_FILENO, r.log_fd)});
      if (r.stderr_fd >= 0) streams_.push_back({r.stderr_fd, std::make_unique<LineTagger>(prefix, STDERR_FILENO, r.log_fd)});
    }
  }

  Outcome run() {
    for (RankProcess& r : ranks_) {
      if (!r.running) rank_ended(r);  // never started
    }
    while (running_count() > 0 || !streams_.empty()) {
      if (running_count() == 0 && !drain_deadline_) {
        // A rank's own children may hold its pipes open; do not wait on them for long.
        drain_deadline_ = Clock::now() + std::chrono::seconds(1);
      }
      if (drain_deadline_ && Clock::now() >= *drain_deadline_) break;
      if (kill_deadline_ && Clock::now() >= *kill_deadline_) {
        kill_after_grace();
        kill_deadline_.reset();
      }
      poll_once();
    }
    for (Stream& s : streams_) close_stream(s);
    if (failed_ || interrupted_) report();
    outcome_.interrupted = interrupted_;
    return outcome_;
  }

 private:
  int running_count() const {
    int n = 0;
    for (const RankProcess& r : ranks_) n += r.running;
    return n;
  }

  int poll_timeout_ms() const {
    std::optional<Clock::time_point> next = kill_deadline_;
    if (drain_deadline_ && (!next || *drain_deadline_ < *next)) next = drain_deadline_;
    if (!next) return -1;  // nothing is due: wake only for output or signals
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now()).count();
    return static_cast<int>(std::max<long long>(0, ms) + 1);
  }

  void poll_once() {
    std::vector<pollfd> fds;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    for (const Stream& s : streams_) fds.push_back({s.fd, POLLIN, 0});
    int ready = poll(fds.data(), fds.size(), poll_timeout_ms());
    if (ready < 0) {
      if (errno == EINTR) return;
      throw std::runtime_error(std::string("poll: ") + strerror(errno));
    }
    if (fds[0].revents & POLLIN) handle_signals();
    for (std::size_t i = fds.size() - 1; i >= 1; --i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_stream(i - 1);
    }
  }

  void read_stream(std::size_t index) {
    Stream& s = streams_[index];
    char buffer[65536];
    ssize_t n = read(s.fd, buffer, sizeof buffer);
    if (n > 0) {
      s.tagger->feed(buffer, static_cast<std::size_t>(n));
      return;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    close_stream(s);
    streams_.erase(streams_.begin() + static_cast<std::ptrdiff_t>(index));
  }

  static void close_stream(Stream& s) {
    s.tagger->finish();
    close(s.fd);
  }

  void handle_signals() {
    unsigned char signals[64];
    ssize_t n = read(g_signal_pipe[0], signals, sizeof signals);
    for (ssize_t i = 0; i < n; ++i) {
      int sig = signals[i];
      if (sig == SIGCHLD) {
        reap();
      } else if (sig == kWakeByte) {
        stop_for_remote_failure();
      } else if (sig == SIGINT || sig == SIGTERM) {
        forward(sig);
      }
    }
  }

  void forward(int sig) {
    if (interrupted_) {
      // A second interrupt: the user does not want to wait for the grace period.
      std::fprintf(stderr, "dtrun: %s again; killing every rank\n", sigabbrev_np(sig));
      signal_running(SIGKILL);
      return;
    }
    interrupted_ = true;
    std::fprintf(stderr, "dtrun: received SIG%s; forwarding it to every rank\n", sigabbrev_np(sig));
    name_stopped_ranks();
    signal_running(sig);
    start_grace_period();
  }

  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      for (RankProcess& r : ranks_) {
        if (r.pid != pid || !r.running) continue;
        r.running = false;
        r.wait_status = status;
        rank_ended(r);
      }
    }
  }

  void rank_ended(const RankProcess& r) {
    bool failed = !(WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0);
    if (!failed || failed_) return;
    failed_ = true;
    outcome_.exit_code = exit_code_of(r.wait_status);
    outcome_.first_failed_rank = r.rank;
    std::string what = "rank " + std::to_string(r.rank) + " " +
                       (r.spawn_error.empty() ? describe_wait_status(r.wait_status) : r.spawn_error);
    std::fprintf(stderr, "dtrun: %s%s\n", what.c_str(), running_count() > 0 ? "; stopping the other ranks" : "");
    if (options_.on_failure) options_.on_failure(outcome_.exit_code, what);
    if (options_.before_stop) options_.before_stop(ranks_);
    name_stopped_ranks();
    signal_running(SIGTERM);
    start_grace_period();
  }

  void stop_for_remote_failure() {
    if (failed_ || !options_.remote_failure) return;
    std::optional<RemoteFailure> remote = options_.remote_failure();
    if (!remote) return;
    failed_ = true;
    outcome_.exit_code = remote->exit_code;
    outcome_.remote_failure = remote->what;
    std::fprintf(stderr, "dtrun: %s%s\n", remote->what.c_str(),
                 running_count() > 0 ? "; stopping the ranks on this node" : "");
    if (options_.before_stop) options_.before_stop(ranks_);
    name_stopped_ranks();
    signal_running(SIGTERM);
    start_grace_period();
  }

  // Ranks still running at the end of the grace period are killed; those
  // that were stopped could not even have seen the SIGTERM.
  void kill_after_grace() {
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      if (!ranks_[i].running) continue;
      killed_[i] = is_stopped(ranks_[i].pid) ? Kill::stopped : Kill::unresponsive;
      kill(-ranks_[i].pid, SIGKILL);
    }
  }

  // Names the ranks that are stopped now: a peer that fails waiting for one
  // is not the cause.
  void name_stopped_ranks() {
    for (const RankProcess& r : ranks_) {
      if (r.running && is_stopped(r.pid)) {
        std::fprintf(stderr, "dtrun: rank %d is stopped (SIGSTOP or a debugger) and answers no one\n", r.rank);
      }
    }
  }

  // How every rank ended, once all have.
  void report() const {
    std::fprintf(stderr, "dtrun: how each rank ended:\n");
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      const RankProcess& r = ranks_[i];
      std::string end = r.running ? "was still running (its output did not close)"
                                  : (r.spawn_error.empty() ? describe_wait_status(r.wait_status) : r.spawn_error);
      char grace[64];
      std::snprintf(grace, sizeof grace, "%g s grace period", options_.grace_seconds);
      if (killed_[i] == Kill::stopped) end += std::string(": it was stopped, and killed after the ") + grace;
      if (killed_[i] == Kill::unresponsive) end += std::string(": it did not end within the ") + grace;
      std::fprintf(stderr, "dtrun:   rank %d %s\n", r.rank, end.c_str());
    }
  }

  void start_grace_period() {
    if (!kill_deadline_) kill_deadline_ = Clock::now() + grace_;
  }

  void signal_running(int sig) {
    for (const RankProcess& r : ranks_) {
      if (r.running) kill(-r.pid, sig);  // the rank's whole process group
    }
  }

  std::vector<RankProcess>& ranks_;
  const SuperviseOptions& options_;
  const Clock::duration grace_;
  enum class Kill { no, unresponsive, stopped };
  std::vector<Kill> killed_;  // by index in ranks_: killed after the grace period, and why
  std::vector<Stream> streams_;
  bool failed_ = false;
  Outcome outcome_;
  std::optional<Clock::time_point> kill_deadline_;
  std::optional<Clock::time_point> drain_deadline_;
  bool interrupted_ = false;
};

}  // namespace

void install_signal_handlers() {
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (int sig : {SIGCHLD, SIGINT, SIGTERM}) sigaction(sig, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int wake_fd() { return g_signal_pipe[1]; }

Outcome supervise(std::vector<RankProcess>& ranks, const SuperviseOptions& options) {
  return Supervisor(ranks, options).run();
}

}  // namespace dtrun
