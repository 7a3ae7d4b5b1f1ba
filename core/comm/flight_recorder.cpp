#include "comm/flight_recorder.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/select.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "base/dtype.hpp"
#include "base/env.hpp"
#include "base/json_text.hpp"
#include "base/log.hpp"
#include "comm/op_log.hpp"
#include "comm/reduce_op.hpp"
#include "comm/trace_file.hpp"

namespace dtrain::comm::flight {

namespace {

// Never destroyed: a dump may come from a backend's thread or SIGUSR1's
// while the process exits.
struct Registry {
  std::mutex mutex;
  std::vector<OpLog*> logs;
  std::string dir;  // DTRAIN_FLIGHT_RECORDER_DIR
  bool signal_watched = false;
};

Registry& registry() {
  static auto* instance = [] {
    auto* r = new Registry;
    r->dir = env::get("DTRAIN_FLIGHT_RECORDER_DIR").value_or("");
    return r;
  }();
  return *instance;
}

int g_signal_pipe[2] = {-1, -1};

void on_sigusr1(int) {
  const int saved = errno;
  const char byte = 1;
  // A full pipe means a dump is pending already.
  [[maybe_unused]] const auto n = ::write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

// SIGUSR1 dumps, from a thread of its own: a signal handler may not take
// locks or allocate. Left alone where the program handles SIGUSR1 itself.
void watch_signal_locked(Registry& r) {
  if (r.signal_watched) return;
  r.signal_watched = true;
  struct sigaction current {};
  if (sigaction(SIGUSR1, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  std::thread([] {
    for (;;) {
      char byte;
      fd_set read_set;
      FD_ZERO(&read_set);
      FD_SET(g_signal_pipe[0], &read_set);
      if (select(g_signal_pipe[0] + 1, &read_set, nullptr, nullptr, nullptr) < 0 && errno != EINTR) return;
      while (::read(g_signal_pipe[0], &byte, 1) == 1) {
      }
      dump("received SIGUSR1");
    }
  }).detach();
  struct sigaction action {};
  action.sa_handler = on_sigusr1;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, nullptr);
  // Tells a launcher that SIGUSR1 asks this process for its record rather
  // than ending it.
  const std::string marker = r.dir + "/sigusr1." + std::to_string(getpid());
  if (std::FILE* file = std::fopen(marker.c_str(), "w")) std::fclose(file);
}

std::string op_line(const OpLog& log, const OpRecord& r) {
  std::string dtype = r.op.dtype >= 0 && r.op.dtype <= static_cast<std::int64_t>(DType::u8)
                          ? dtype_name(static_cast<DType>(r.op.dtype))
                          : "";
  std::string op = r.op.op >= 0 && r.op.op <= static_cast<std::int64_t>(ReduceOp::prod)
                       ? reduce_op_name(static_cast<ReduceOp>(r.op.op))
                       : "";
  const JsonLine line = {{"record", "op"},
                     {"comm", log.label()},
                     {"id", r.id},
                     {"seq", r.sequence},
                     {"kind", call_kind_name(r.op.kind)},
                     {"dtype", dtype},
                     {"count", r.op.count},
                     {"op", op},
                     {"root", r.op.root},
                     {"tag", r.op.tag},
                     {"bytes", r.op.bytes},
                     {"algorithm", r.algorithm != nullptr ? r.algorithm : ""},
                     {"state", op_state_name(r.state)},
                     {"status", status_name(r.status)},
                     {"start_us", trace::wall_us(r.start_ns)},
                     {"end_us", r.end_ns == 0 ? 0 : trace::wall_us(r.end_ns)},
                     {"what", describe(r)}};
  return json_line(line);
}

std::string contents_locked(const Registry& r, const std::string& reason) {
  using namespace std::chrono;
  const auto now_us = duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  std::string lines = json_line({{"record", "process"},
                             {"format", 1},
                             {"world_rank", r.logs.front()->world_rank()},
                             {"pid", getpid()},
                             {"time_us", now_us},
                             {"reason", reason}});
  for (const OpLog* log : r.logs) {
    lines += json_line({{"record", "comm"},
                   {"comm", log->label()},
                   {"comm_rank", log->rank()},
                   {"comm_size", log->size()},
                   {"backend", log->backend()},
                   {"failure", log->failure()}});
    for (const OpRecord& record : log->snapshot()) lines += op_line(*log, record);
  }
  return lines;
}

}  // namespace

void enroll(OpLog* log) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.logs.push_back(log);
  if (!r.dir.empty()) watch_signal_locked(r);
}

void withdraw(OpLog* log) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.logs.erase(std::remove(r.logs.begin(), r.logs.end(), log), r.logs.end());
}

void dump(const std::string& reason) {
  Registry& r = registry();
  if (r.dir.empty()) return;
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.logs.empty()) return;
    const std::string path = r.dir + "/flight.rank" + std::to_string(r.logs.front()->world_rank()) + ".jsonl";
    const std::string partial = path + ".partial";
    const std::string text = contents_locked(r, reason);
    std::FILE* file = std::fopen(partial.c_str(), "w");
    const bool written = file != nullptr && std::fwrite(text.data(), 1, text.size(), file) == text.size();
    const bool closed = file != nullptr && std::fclose(file) == 0;
    if (!written || !closed || std::rename(partial.c_str(), path.c_str()) != 0) {
      DT_LOG(warn) << "cannot write the flight record " << path << " (DTRAIN_FLIGHT_RECORDER_DIR)";
      return;
    }
    DT_LOG(info) << "flight record written to " << path << " (" << reason << ")";
  } catch (const std::exception& e) {
    DT_LOG(warn) << "flight record not written: " << e.what();
  }
}

}  // namespace dtrain::comm::flight
