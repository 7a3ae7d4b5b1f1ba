#include "comm/trace_file.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "base/dtype.hpp"
#include "base/env.hpp"
#include "base/json_text.hpp"
#include "base/log.hpp"
#include "comm/reduce_op.hpp"

namespace dtrain::comm::trace {

namespace {

// The process's trace file. Never destroyed: completions may still come
// from backend threads while the process exits; an atexit handler closes
// the array and the file, and later events are dropped.
struct Writer {
  std::mutex mutex;
  std::string path;  // DTRAIN_TRACE_FILE
  std::FILE* file = nullptr;
  bool failed = false;  // could not open: said once, nothing more written
  bool closed = false;
  std::map<std::string, int> threads;  // thread name -> tid
};

Writer& writer() {
  static Writer* instance = [] {
    auto* w = new Writer;
    w->path = env::get("DTRAIN_TRACE_FILE").value_or("");
    if (!w->path.empty()) std::atexit([] {
        Writer& open = writer();
        std::lock_guard<std::mutex> lock(open.mutex);
        if (open.file != nullptr) {
          std::fputs("\n]\n", open.file);
          std::fclose(open.file);
          open.file = nullptr;
        }
        open.closed = true;
      });
    return w;
  }();
  return *instance;
}

// Opens PATH.rank<R> and writes the process's name; false when it cannot.
bool open_locked(Writer& w, int world_rank) {
  if (w.file != nullptr) return true;
  if (w.failed || w.closed) return false;
  const std::string path = w.path + ".rank" + std::to_string(world_rank);
  w.file = std::fopen(path.c_str(), "w");
  if (w.file == nullptr) {
    w.failed = true;
    DT_LOG(warn) << "cannot write the trace file " << path << " (DTRAIN_TRACE_FILE); tracing is off";
    return false;
  }
  std::fprintf(w.file, "[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}}",
               world_rank, world_rank);
  return true;
}

int thread_locked(Writer& w, int world_rank, const std::string& name) {
  auto [it, added] = w.threads.emplace(name, static_cast<int>(w.threads.size()) + 1);
  if (added) {
    std::fprintf(w.file, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":%s}}",
                 world_rank, it->second, json_string(name).c_str());
  }
  return it->second;
}

std::string args(const OpLog& log, const OpRecord& r) {
  std::string text = "\"comm\":" + json_string(log.label()) + ",\"comm_rank\":" + std::to_string(log.rank()) +
                     ",\"comm_size\":" + std::to_string(log.size()) + ",\"backend\":" + json_string(log.backend()) +
                     ",\"id\":" + std::to_string(r.id) + ",\"seq\":" + std::to_string(r.sequence) +
                     ",\"bytes\":" + std::to_string(r.op.bytes);
  if (r.op.dtype >= 0 && r.op.dtype <= static_cast<std::int64_t>(DType::u8)) {
    text += ",\"dtype\":" + json_string(dtype_name(static_cast<DType>(r.op.dtype)));
  }
  if (r.op.count >= 0) text += ",\"count\":" + std::to_string(r.op.count);
  if (r.op.op >= 0 && r.op.op <= static_cast<std::int64_t>(ReduceOp::prod)) {
    text += ",\"op\":" + json_string(reduce_op_name(static_cast<ReduceOp>(r.op.op)));
  }
  const bool p2p = !is_collective(r.op.kind);
  if (r.op.root >= 0) text += (p2p ? ",\"peer\":" : ",\"root\":") + std::to_string(r.op.root);
  if (r.op.tag >= 0) text += (r.op.kind == OpKind::p2p_group ? ",\"ops\":" : ",\"tag\":") + std::to_string(r.op.tag);
  if (r.algorithm != nullptr) text += ",\"algorithm\":" + json_string(r.algorithm);
  return text + ",\"status\":" + json_string(status_name(r.status));
}

}  // namespace

bool enabled() {
  static const bool on = !writer().path.empty();
  return on;
}

std::int64_t wall_us(std::int64_t steady) {
  using namespace std::chrono;
  // The two clocks' difference, taken once: events of one process stay in
  // the order and at the distances the steady clock measured.
  static const std::int64_t offset_ns =
      duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count() - steady_ns();
  return (steady + offset_ns) / 1000;
}

void write(const OpLog& log, const OpRecord& record) {
  write_span(log.world_rank(),
             Span{"comm " + log.label() + " (rank " + std::to_string(log.rank()) + " of " + std::to_string(log.size()) + ")",
                  call_kind_name(record.op.kind), is_collective(record.op.kind) ? "collective" : "p2p", record.start_ns,
                  record.end_ns, args(log, record)});
}

void write_span(int world_rank, const Span& span) {
  const std::int64_t ts = wall_us(span.start_ns);
  const std::int64_t dur = (span.end_ns - span.start_ns) / 1000;
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (!open_locked(w, world_rank)) return;
  const int tid = thread_locked(w, world_rank, span.thread);
  std::fprintf(w.file,
               ",\n{\"name\":%s,\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%lld,\"dur\":%lld,"
               "\"args\":{%s}}",
               json_string(span.name).c_str(), span.category, world_rank, tid, static_cast<long long>(ts),
               static_cast<long long>(dur), span.args.c_str());
}

void flush() {
  if (!enabled()) return;
  Writer& w = writer();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.file != nullptr) std::fflush(w.file);
}

}  // namespace dtrain::comm::trace
