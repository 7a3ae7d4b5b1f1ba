// Each communicator's record of its operations: one hook that the flight
// recorder, the timeline and the statistics all read from.
//
// The communicator calls begin() as an operation starts and the request's
// completion calls end() (Request::record_in), whichever thread completes
// it. A ring keeps the last `capacity` operations (DTRAIN_FLIGHT_RECORDER_ENTRIES,
// default 512, 0 < n <= 1048576); counts, bytes and time add up by kind.
// With tracing off, begin() and end() are a dozen relaxed stores and three
// relaxed additions: no lock, no allocation (and an NVTX range on builds
// with CUDA, nvtx_range.hpp). With DTRAIN_TRACE_FILE set each
// finished operation is also written to the trace (trace_file.hpp), and with
// DTRAIN_LOG_LEVEL=trace it is logged.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/call_check.hpp"
#include "comm/nvtx_range.hpp"
#include "dtrain/status.h"

namespace dtrain::comm {

// The kinds of operation (call_check.hpp).
using OpKind = CallKind;
inline constexpr int kOpKinds = 16;  // OpKind values are below this

enum class OpState : int { started = 1, completed = 2, failed = 3 };
const char* op_state_name(OpState state);

// What an operation is, as begin() records it. Fields a kind does not have
// are -1.
struct OpStart {
  OpKind kind = OpKind::barrier;
  std::int64_t dtype = -1;  // a DType
  std::int64_t count = -1;  // as Call::count; for send, recv and p2p_group, the elements of this rank's buffers
  std::int64_t op = -1;     // a ReduceOp
  std::int64_t root = -1;   // root, or the peer of a send or recv
  std::int64_t tag = -1;    // of a send or recv; for a p2p_group, its number of ops
  std::int64_t bytes = 0;   // of this rank's buffer the operation is about (dtrain/stats.h)
};

// One operation as the ring holds it.
struct OpRecord {
  std::uint64_t id = 0;        // among this communicator's operations, from 1
  std::int64_t sequence = 0;   // among its collectives, from 1; 0 for point-to-point
  OpStart op;
  OpState state = OpState::started;
  dt_status status = DT_INPROGRESS;
  std::int64_t start_ns = 0;  // steady clock (Clock), nanoseconds
  std::int64_t end_ns = 0;    // 0 while started
  const char* algorithm = nullptr;  // as the backend named it; nullptr: not named
};

struct OpTotals {
  std::int64_t count = 0;  // operations finished
  std::int64_t failed = 0;  // of which with an error
  std::int64_t bytes = 0;
  std::int64_t ns = 0;  // from start to completion, summed
};

class OpLog {
 public:
  // `label` names the communicator alike on every rank (Communicator::label);
  // `world_rank` is this process's rank in its job; `backend` (a string
  // literal) the backend that moves the data.
  OpLog(std::string label, int rank, int size, int world_rank, const char* backend);
  ~OpLog();
  OpLog(const OpLog&) = delete;
  OpLog& operator=(const OpLog&) = delete;

  // Records the start of an operation; returns its id. One thread at a
  // time (the communicator's user).
  std::uint64_t begin(const OpStart& op);
  // Records how operation `id` ended, and the algorithm that ran it (a
  // string literal, or nullptr); any thread, once per id. An id the ring
  // has already overwritten (more than `capacity` operations pending at
  // once) is not recorded.
  void end(std::uint64_t id, dt_status status, const char* algorithm = nullptr);

  // The operations the ring holds, oldest first; those being overwritten
  // while it reads are left out.
  std::vector<OpRecord> snapshot() const;
  // Totals of one kind, or of all with `kind` 0.
  OpTotals totals(int kind) const;

  // Why the communicator broke, for the flight recorder (the first reason wins).
  void note_failure(const std::string& reason);
  std::string failure() const;

  const std::string& label() const { return label_; }
  const char* backend() const { return backend_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int world_rank() const { return world_rank_; }

 private:
  struct Slot {
    std::atomic<std::uint64_t> id{0};  // 0 while being written
    std::atomic<std::int64_t> sequence{0};
    std::atomic<int> kind{0};
    std::atomic<std::int64_t> dtype{-1}, count{-1}, op{-1}, root{-1}, tag{-1}, bytes{0};
    std::atomic<int> state{0};
    std::atomic<int> status{DT_INPROGRESS};
    std::atomic<std::int64_t> start_ns{0}, end_ns{0};
    std::atomic<const char*> algorithm{nullptr};
    nvtx::RangeId nvtx;
  };
  struct Totals {
    std::atomic<std::int64_t> count{0}, failed{0}, bytes{0}, ns{0};
  };

  const std::string label_;
  const char* const backend_;
  const int rank_;
  const int size_;
  const int world_rank_;
  const std::size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<std::uint64_t> next_id_{0};
  std::int64_t collectives_ = 0;  // by the user's thread only
  std::array<Totals, kOpKinds> totals_;
  mutable std::mutex failure_mutex_;
  std::string failure_;
};

// "allreduce #42 (4096 float32, sum)": what an operation was, for logs and
// the flight recorder's analysis.
std::string describe(const OpRecord& record);

// "DT_OK", "DT_ERR_TIMEOUT": a status as the enum names it.
const char* status_name(dt_status status);

// Nanoseconds on the steady clock, as OpRecord keeps them.
std::int64_t steady_ns();

}  // namespace dtrain::comm
