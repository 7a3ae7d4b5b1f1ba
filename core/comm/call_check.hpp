// What a rank was asked to do in one collective, compared across the ranks.
// Ranks that disagree about the kind of collective, its dtype, count,
// reduction or root would otherwise wait for messages that never come, or
// exchange ones that fit by chance and return wrong buffers with DT_OK.
// With the check on, each collective's call (kind, sequence number, dtype,
// count, reduction, root, a digest of per-rank counts) is exchanged by a
// small allreduce queued just before the collective, and looked at before
// the collective starts when the caller waits at once, otherwise before
// anyone learns how it ended: ranks that disagree all fail with
// DT_ERR_MISMATCH naming what each rank called ("rank 0 called
// allreduce(4096 float32, sum), rank 1 called allgather(1024 float32)").
// A non-blocking caller's collective was queued already, so there the
// mismatch breaks the communicator.
//
// Off by default: DTRAIN_CHECK_COLLECTIVES=1 turns it on, on every rank
// alike (the exchange is one more small collective per collective, about
// doubling the time of a latency-bound one; benchmarks/README.md,
// "dtbench checks"). Without it the backends still refuse what they can
// see (sizes, dtypes and reductions of allreduces through shared memory,
// messages of the wrong size, the rooted and uneven collectives' promises).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.hpp"
#include "comm/reduce_op.hpp"

namespace dtrain::comm {

// Every kind of operation a communicator starts. The collectives come
// first and are what the call check compares; the values are dt_op_kind's
// (dtrain/stats.h) and travel between ranks, so they never change.
enum class CallKind : std::int64_t {
  allreduce = 1,
  reduce_scatter,
  allgather,
  broadcast,
  alltoall,
  alltoallv,
  barrier,
  reduce,
  gather,
  scatter,
  allgatherv,
  reduce_scatterv,
  send,
  recv,
  p2p_group,
};

inline bool is_collective(CallKind kind) { return kind < CallKind::send; }

const char* call_kind_name(CallKind kind);

// Fields a kind does not have are -1 (0 for `counts`).
struct Call {
  CallKind kind = CallKind::barrier;
  std::int64_t sequence = 0;  // among this communicator's collectives, from 1
  std::int64_t dtype = -1;    // a DType
  std::int64_t count = -1;    // the elements every rank names alike (communicator.cpp says which)
  std::int64_t op = -1;       // a ReduceOp
  std::int64_t root = -1;
  std::int64_t counts = 0;  // a digest of per-rank counts every rank passes alike

  bool operator==(const Call&) const = default;
};

inline constexpr int kCallWords = 7;
std::array<std::int64_t, kCallWords> encode(const Call& call);
Call decode(const std::int64_t* words);

// "ranks disagree about collective #42: rank 0 called allreduce(4096
// float32, sum), rank 1 called allgather(1024 float32)", with `calls` in
// rank order; neighbours that agree are grouped ("ranks 1-3 all called").
// `ranks` says whose each call is, in increasing order, where they are not
// every rank's (empty: calls[i] is rank i's).
std::string describe_disagreement(const std::vector<Call>& calls, const std::vector<int>& ranks = {});

// A digest of per-rank counts.
std::int64_t counts_digest(const std::vector<std::int64_t>& counts);

// Whether communicators compare calls: DTRAIN_CHECK_COLLECTIVES (0 or 1), default 0.
bool call_checks_enabled();

}  // namespace dtrain::comm
