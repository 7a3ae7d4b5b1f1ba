#include "comm/op_log.hpp"

#include <chrono>
#include <iterator>

#include "base/dtype.hpp"
#include "base/env.hpp"
#include "base/log.hpp"
#include "comm/flight_recorder.hpp"
#include "comm/nvtx_range.hpp"
#include "comm/reduce_op.hpp"
#include "comm/trace_file.hpp"

namespace dtrain::comm {

namespace {

std::size_t capacity_from_env() {
  return static_cast<std::size_t>(env::get_int("DTRAIN_FLIGHT_RECORDER_ENTRIES", 1, 1 << 20).value_or(512));
}

}  // namespace

const char* op_state_name(OpState state) {
  switch (state) {
    case OpState::started: return "started";
    case OpState::completed: return "completed";
    case OpState::failed: return "failed";
  }
  return "unknown";
}

const char* status_name(dt_status status) {
  static const char* const errors[] = {"DT_ERR_INVALID_ARGUMENT", "DT_ERR_INVALID_USAGE", "DT_ERR_UNSUPPORTED",
                                       "DT_ERR_OUT_OF_MEMORY",    "DT_ERR_TIMEOUT",       "DT_ERR_REMOTE",
                                       "DT_ERR_TRANSPORT",        "DT_ERR_ABORTED",       "DT_ERR_AUTH",
                                       "DT_ERR_MISMATCH",         "DT_ERR_INTERNAL",      "DT_ERR_IO"};
  if (status == DT_OK) return "DT_OK";
  if (status == DT_INPROGRESS) return "DT_INPROGRESS";
  if (status < 0 && -status <= static_cast<int>(std::size(errors))) return errors[-status - 1];
  return "DT_ERR_UNKNOWN";
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

OpLog::OpLog(std::string label, int rank, int size, int world_rank, const char* backend)
    : label_(std::move(label)),
      backend_(backend),
      rank_(rank),
      size_(size),
      world_rank_(world_rank),
      capacity_(capacity_from_env()),
      slots_(new Slot[capacity_]) {
  flight::enroll(this);
}

OpLog::~OpLog() {
  flight::withdraw(this);
  trace::flush();
}

std::uint64_t OpLog::begin(const OpStart& op) {
  const std::uint64_t id = next_id_.load(std::memory_order_relaxed) + 1;
  next_id_.store(id, std::memory_order_relaxed);
  Slot& slot = slots_[id % capacity_];
  // Readers skip a slot whose id is 0 or changes while they read it.
  slot.id.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot.sequence.store(is_collective(op.kind) ? ++collectives_ : 0, std::memory_order_relaxed);
  slot.kind.store(static_cast<int>(op.kind), std::memory_order_relaxed);
  slot.dtype.store(op.dtype, std::memory_order_relaxed);
  slot.count.store(op.count, std::memory_order_relaxed);
  slot.op.store(op.op, std::memory_order_relaxed);
  slot.root.store(op.root, std::memory_order_relaxed);
  slot.tag.store(op.tag, std::memory_order_relaxed);
  slot.bytes.store(op.bytes, std::memory_order_relaxed);
  slot.state.store(static_cast<int>(OpState::started), std::memory_order_relaxed);
  slot.status.store(DT_INPROGRESS, std::memory_order_relaxed);
  slot.end_ns.store(0, std::memory_order_relaxed);
  slot.algorithm.store(nullptr, std::memory_order_relaxed);
  slot.start_ns.store(steady_ns(), std::memory_order_relaxed);
  slot.id.store(id, std::memory_order_release);
  nvtx::start(slot.nvtx, call_kind_name(op.kind));
  return id;
}

namespace {

// Reads `slot` if it still holds `id` (any id when `id` is 0).
bool read_slot(const auto& slot, std::uint64_t id, OpRecord* out) {
  const std::uint64_t before = slot.id.load(std::memory_order_acquire);
  if (before == 0 || (id != 0 && before != id)) return false;
  OpRecord r;
  r.id = before;
  r.sequence = slot.sequence.load(std::memory_order_relaxed);
  r.op.kind = static_cast<OpKind>(slot.kind.load(std::memory_order_relaxed));
  r.op.dtype = slot.dtype.load(std::memory_order_relaxed);
  r.op.count = slot.count.load(std::memory_order_relaxed);
  r.op.op = slot.op.load(std::memory_order_relaxed);
  r.op.root = slot.root.load(std::memory_order_relaxed);
  r.op.tag = slot.tag.load(std::memory_order_relaxed);
  r.op.bytes = slot.bytes.load(std::memory_order_relaxed);
  r.state = static_cast<OpState>(slot.state.load(std::memory_order_acquire));
  r.status = static_cast<dt_status>(slot.status.load(std::memory_order_relaxed));
  r.start_ns = slot.start_ns.load(std::memory_order_relaxed);
  r.end_ns = slot.end_ns.load(std::memory_order_relaxed);
  r.algorithm = slot.algorithm.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (slot.id.load(std::memory_order_relaxed) != before) return false;
  *out = r;
  return true;
}

}  // namespace

void OpLog::end(std::uint64_t id, dt_status status, const char* algorithm) {
  Slot& slot = slots_[id % capacity_];
  if (slot.id.load(std::memory_order_acquire) != id) return;
  const std::int64_t now = steady_ns();
  slot.end_ns.store(now, std::memory_order_relaxed);
  slot.algorithm.store(algorithm, std::memory_order_relaxed);
  slot.status.store(status, std::memory_order_relaxed);
  slot.state.store(static_cast<int>(status == DT_OK ? OpState::completed : OpState::failed),
                   std::memory_order_release);
  nvtx::end(slot.nvtx);
  const int kind = slot.kind.load(std::memory_order_relaxed);
  Totals& t = totals_[static_cast<std::size_t>(kind)];
  t.count.fetch_add(1, std::memory_order_relaxed);
  if (status != DT_OK) t.failed.fetch_add(1, std::memory_order_relaxed);
  t.bytes.fetch_add(slot.bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
  t.ns.fetch_add(now - slot.start_ns.load(std::memory_order_relaxed), std::memory_order_relaxed);
  const bool tracing = trace::enabled();
  const bool logging = log::enabled(log::Level::trace);
  if (!tracing && !logging) return;
  OpRecord record;
  if (!read_slot(slot, id, &record)) return;
  if (tracing) trace::write(*this, record);
  if (logging) {
    DT_LOG(trace) << label_ << " rank " << rank_ << "/" << size_ << ": " << describe(record) << " "
                  << op_state_name(record.state) << " in " << (record.end_ns - record.start_ns) / 1000 << " us"
                  << (status == DT_OK ? "" : std::string(" (") + status_name(status) + ")");
  }
}

std::vector<OpRecord> OpLog::snapshot() const {
  std::vector<OpRecord> records;
  const std::uint64_t last = next_id_.load(std::memory_order_acquire);
  const std::uint64_t first = last > capacity_ ? last - capacity_ + 1 : 1;
  for (std::uint64_t id = first; id <= last; ++id) {
    OpRecord record;
    if (read_slot(slots_[id % capacity_], id, &record)) records.push_back(record);
  }
  return records;
}

OpTotals OpLog::totals(int kind) const {
  OpTotals sum;
  for (int k = kind == 0 ? 1 : kind; k <= (kind == 0 ? kOpKinds - 1 : kind); ++k) {
    const Totals& t = totals_[static_cast<std::size_t>(k)];
    sum.count += t.count.load(std::memory_order_relaxed);
    sum.failed += t.failed.load(std::memory_order_relaxed);
    sum.bytes += t.bytes.load(std::memory_order_relaxed);
    sum.ns += t.ns.load(std::memory_order_relaxed);
  }
  return sum;
}

void OpLog::note_failure(const std::string& reason) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failure_.empty()) failure_ = reason;
}

std::string OpLog::failure() const {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return failure_;
}

std::string describe(const OpRecord& record) {
  std::string text = call_kind_name(record.op.kind);
  text += is_collective(record.op.kind) ? " #" + std::to_string(record.sequence) : "";
  std::string detail;
  const auto add = [&detail](const std::string& part) { detail += (detail.empty() ? "" : ", ") + part; };
  std::string elements = record.op.count >= 0 ? std::to_string(record.op.count) : "";
  if (record.op.dtype >= 0 && record.op.dtype <= static_cast<std::int64_t>(DType::u8)) {
    const char* dtype = dtype_name(static_cast<DType>(record.op.dtype));
    elements += elements.empty() ? dtype : std::string(" ") + dtype;
  }
  if (!elements.empty()) add(elements);
  if (record.op.op >= 0 && record.op.op <= static_cast<std::int64_t>(ReduceOp::prod)) {
    add(reduce_op_name(static_cast<ReduceOp>(record.op.op)));
  }
  const bool p2p = record.op.kind == OpKind::send || record.op.kind == OpKind::recv;
  if (record.op.root >= 0) add((p2p ? "peer " : "root ") + std::to_string(record.op.root));
  if (record.op.tag >= 0) add((p2p ? "tag " : "ops ") + std::to_string(record.op.tag));
  return detail.empty() ? text : text + " (" + detail + ")";
}

}  // namespace dtrain::comm
