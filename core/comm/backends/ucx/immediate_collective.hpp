// A collective the engine runs for a caller that waits for it at once
// (Engine::run_now()), without an Operation: no allocation, no coroutine,
// no request of its own, which at a few bytes cost as much as the exchange.
// It takes its place in the order of collectives and fails in the same ways
// as a scheduled one. Three kinds: small allreduces over UCX messages
// (small_allreduce.hpp), allreduces through shared memory
// (local_allreduce.hpp) and every other collective through shared memory
// (local_exchange.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "base/tensor.hpp"
#include "comm/backends/ucx/group.hpp"
#include "comm/collective.hpp"
#include "comm/reduce_op.hpp"
#include "dtrain/status.h"

namespace dtrain::comm::ucx {

class ImmediateCollective {
 public:
  struct Outcome {
    dt_status status = DT_OK;
    std::string why;  // for a failure, after the operation's prefix
  };

  virtual ~ImmediateCollective() = default;

  // Starts the operation numbered `sequence` among collectives; the engine
  // then calls advance() after each round of progress.
  virtual void start(const Group& group, std::uint64_t sequence, const Collective& collective) = 0;
  enum class Progress { none, some, over };
  // Goes as far as it can without waiting.
  virtual Progress advance() = 0;
  // Once advance() has returned Progress::over: how it ended.
  virtual Outcome outcome() const = 0;
  // No transfer in flight: it may start again.
  virtual bool quiescent() const = 0;
  // Whether it still waits on, or sends to, `peer`.
  virtual bool involves(int peer) const = 0;
  // The peer it waits for first; -1 when none.
  virtual int waiting_on() const = 0;
  // Cancels what can be cancelled; returns the peer of a send still in
  // flight (only closing its endpoint ends it), or -1.
  virtual int cancel(Transport& transport) = 0;
  // It completes without any event from the worker: whoever drives it must
  // poll rather than sleep on the worker's events.
  virtual bool polled() const = 0;
};

}  // namespace dtrain::comm::ucx
