// Logging. DTRAIN_LOG_LEVEL (error, warn, info, debug, trace; default warn)
// chooses what is written, unless set_level() chose; DTRAIN_LOG_FILE appends
// to a file instead of stderr. Every line carries the UTC time, the
// process's rank and the level. A host's sink (dt_set_log_callback) takes
// the lines instead. This configuration is the library's only process-wide
// mutable state.
#pragma once

#include <sstream>
#include <string>

namespace dtrain::log {

enum class Level { error = 0, warn = 1, info = 2, debug = 3, trace = 4 };

// Reads DTRAIN_LOG_LEVEL and DTRAIN_LOG_FILE again (they are first read on
// the first message). An unknown level is reported once and warn is used.
void configure_from_env();

// The rank shown on each line; -1 (the default) shows "-".
void set_rank(int rank);
// That rank: this process's rank in its job, once a communicator knows it.
int rank();

// Sets the level in place of DTRAIN_LOG_LEVEL's.
void set_level(Level level);

// Where lines go instead of stderr or DTRAIN_LOG_FILE: sink(user, level,
// rank, message), one call at a time; nullptr restores them. Returns once
// the previous sink is no longer running.
using Sink = void (*)(void* user, Level level, int rank, const char* message);
void set_sink(Sink sink, void* user);

bool enabled(Level level);
void write(Level level, const std::string& message);

}  // namespace dtrain::log

// DT_LOG(info) << "text " << value; — the stream is built only when enabled.
#define DT_LOG(level)                                                             \
  for (bool dt_log_once_ = ::dtrain::log::enabled(::dtrain::log::Level::level);    \
       dt_log_once_; dt_log_once_ = false)                                          \
  ::dtrain::log::detail::Line(::dtrain::log::Level::level).stream()

namespace dtrain::log::detail {
class Line {
 public:
  explicit Line(Level level) : level_(level) {}
  ~Line() { write(level_, stream_.str()); }
  std::ostringstream& stream() { return stream_; }

 private:
  Level level_;
  std::ostringstream stream_;
};
}  // namespace dtrain::log::detail
