#include "base/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "base/env.hpp"

namespace dtrain::log {

namespace {

struct Config {
  std::mutex mutex;
  bool configured = false;
  Level level = Level::warn;
  std::FILE* file = nullptr;  // nullptr: stderr
  Sink sink = nullptr;        // a host's, in place of the file
  void* sink_user = nullptr;
};

Config& config() {
  static Config instance;
  return instance;
}

std::atomic<int> g_rank{-1};
std::atomic<int> g_level{-1};  // cached Level; -1 until configured

const char* level_name(Level level) {
  static const char* names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
  return names[static_cast<int>(level)];
}

bool parse_level(const std::string& text, Level* out) {
  static const char* names[] = {"error", "warn", "info", "debug", "trace"};
  for (int i = 0; i < 5; ++i) {
    if (text == names[i]) {
      *out = static_cast<Level>(i);
      return true;
    }
  }
  return false;
}

void configure_locked(Config& c) {
  if (c.file != nullptr) std::fclose(c.file);
  c.file = nullptr;
  c.level = Level::warn;
  std::vector<std::string> problems;
  if (auto text = env::get("DTRAIN_LOG_LEVEL"); text && !parse_level(*text, &c.level)) {
    problems.push_back("DTRAIN_LOG_LEVEL='" + *text + "' is not one of error, warn, info, debug, trace; using warn");
  }
  if (auto path = env::get("DTRAIN_LOG_FILE")) {
    c.file = std::fopen(path->c_str(), "a");
    if (c.file == nullptr) problems.push_back("cannot open DTRAIN_LOG_FILE='" + *path + "'; logging to stderr");
  }
  c.configured = true;
  g_level.store(static_cast<int>(c.level));
  std::FILE* out = c.file ? c.file : stderr;
  for (const auto& problem : problems) std::fprintf(out, "dtrain: %s\n", problem.c_str());
  std::fflush(out);
}

void ensure_configured() {
  if (g_level.load(std::memory_order_acquire) >= 0) return;
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.configured) configure_locked(c);
}

}  // namespace

void configure_from_env() {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mutex);
  configure_locked(c);
}

void set_rank(int rank) { g_rank.store(rank); }

int rank() { return g_rank.load(); }

void set_level(Level level) {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.configured) configure_locked(c);  // DTRAIN_LOG_FILE still applies
  c.level = level;
  g_level.store(static_cast<int>(level));
}

void set_sink(Sink sink, void* user) {
  Config& c = config();
  // Taken while a line is being written, so the old sink has returned.
  std::lock_guard<std::mutex> lock(c.mutex);
  c.sink = sink;
  c.sink_user = user;
}

bool enabled(Level level) {
  ensure_configured();
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void write(Level level, const std::string& message) {
  using namespace std::chrono;
  const int rank = g_rank.load();
  auto now = system_clock::now();
  std::time_t seconds = system_clock::to_time_t(now);
  int millis = static_cast<int>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  std::string who = rank >= 0 ? std::to_string(rank) : "-";

  // One lock for both destinations: a line goes wholly to the sink set when
  // it is written, or wholly to the file.
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.sink != nullptr) {
    c.sink(c.sink_user, level, rank, message.c_str());
    return;
  }
  std::FILE* out = c.file ? c.file : stderr;
  std::fprintf(out, "%s.%03dZ dtrain[rank %s] %s %s\n", stamp, millis, who.c_str(),
               level_name(level), message.c_str());
  std::fflush(out);
}

}  // namespace dtrain::log
