#include "dtrain/log.h"

#include <memory>
#include <mutex>
#include <string>

#include "base/enum_value.hpp"
#include "base/log.hpp"
#include "entry.hpp"

namespace {

using dtrain::log::Level;

static_assert(static_cast<int>(Level::error) == DT_LOG_ERROR && static_cast<int>(Level::warn) == DT_LOG_WARN &&
                  static_cast<int>(Level::info) == DT_LOG_INFO && static_cast<int>(Level::debug) == DT_LOG_DEBUG &&
                  static_cast<int>(Level::trace) == DT_LOG_TRACE,
              "dt_log_level and log::Level number the levels alike");

// The host's callback as the core's sink sees it.
struct HostSink {
  dt_log_fn fn;
  void* user;
};

void call_host(void* sink, Level level, int rank, const char* message) {
  const auto* host = static_cast<const HostSink*>(sink);
  host->fn(host->user, static_cast<dt_log_level>(level), rank, message);
}

std::mutex g_host_mutex;          // orders dt_set_log_callback calls
std::unique_ptr<HostSink> g_host;  // the sink's user while it is set

}  // namespace

extern "C" {

DT_API dt_status dt_set_log_callback(dt_log_fn fn, void* user) {
  std::lock_guard<std::mutex> lock(g_host_mutex);
  auto next = fn == nullptr ? nullptr : std::make_unique<HostSink>(HostSink{fn, user});
  dtrain::log::set_sink(next ? call_host : nullptr, next.get());
  g_host = std::move(next);  // the previous one is no longer running: freed
  return DT_OK;
}

DT_API dt_status dt_set_log_level(dt_log_level level) {
  return dtrain::capi::entry([&] {
    const int value = dtrain::enum_value(level);
    if (value < DT_LOG_ERROR || value > DT_LOG_TRACE) {
      dtrain::raise(DT_ERR_INVALID_ARGUMENT,
                    "level " + std::to_string(value) + " is not a dt_log_level (DT_LOG_ERROR to DT_LOG_TRACE)");
    }
    dtrain::log::set_level(static_cast<Level>(value));
  });
}

}  // extern "C"
