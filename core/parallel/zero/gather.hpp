// Stage 3's parameters on demand: a unit's full parameters exist only
// between gather() and release(), allgathered from every rank's shard into
// a freshly allocated buffer.
//
// Prefetch: gather(u) also starts gathering the next unit in the direction
// the gathers move: u + 1 while they ascend (forward), u - 1 while they
// descend (backward); gathering the unit gathered last again turns the
// direction around. The direction follows from the sequence of gathers
// alone, so every rank prefetches the same units in the same order.
//
// Device memory: the full units are allocated in the Zero's queue and
// gathered on its stream; a unit is whole once its allgather's request has
// completed, which both CUDA paths report only with the results in place.
// release() frees the unit after the work the trainer's stream holds then.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "base/tensor.hpp"
#include "comm/communicator.hpp"
#include "parallel/zero/layout.hpp"
#include "parallel/zero/memory.hpp"

namespace dtrain::parallel::zero {

enum class GatherState {
  released,   // only the shards exist
  in_flight,  // the allgather runs
  whole,      // waited for: its parameters can be used
};

class Gatherer {
 public:
  // `shards[u]` is this rank's shard of unit u, in `queue`'s memory; it must
  // stay in place while this object lives. The communicator, ledger and
  // queue must outlive it too. `trainer_stream`: the stream the trainer
  // reads parameters on (device memory; NULL is the legacy default stream).
  Gatherer(comm::Communicator& comm, const Layout& layout, std::vector<TensorView> shards, MemoryLedger& ledger,
           device::Queue& queue, void* trainer_stream, bool prefetch);
  // Waits for allgathers still in flight (within the communicator's
  // deadline): they write into buffers owned here.
  ~Gatherer();

  Gatherer(const Gatherer&) = delete;
  Gatherer& operator=(const Gatherer&) = delete;

  // Starts gathering `unit` (unless it is already gathered) and prefetches.
  void gather(std::size_t unit);
  // Waits until `unit` is whole, gathering it first if needed. On failure
  // the unit is released again.
  void wait(std::size_t unit, int timeout_ms);
  // Frees `unit`'s full parameters (waiting first for an allgather in
  // flight). DT_ERR_INVALID_USAGE when it is not gathered.
  void release(std::size_t unit);

  GatherState state(std::size_t unit) const { return units_[unit].state; }
  // The full unit (padded): DT_ERR_INVALID_USAGE unless it is whole.
  const TrackedBuffer& whole(std::size_t unit) const;
  // The lowest unit not released, or the unit count when none is gathered.
  std::size_t first_gathered() const;

 private:
  struct UnitState {
    GatherState state = GatherState::released;
    TrackedBuffer full;
    comm::RequestPtr request;  // none for a unit of no elements
  };

  void start(std::size_t unit);

  comm::Communicator& comm_;
  const Layout& layout_;
  const std::vector<TensorView> shards_;
  MemoryLedger& ledger_;
  device::Queue& queue_;
  void* const trainer_stream_;
  const bool prefetch_;
  std::vector<UnitState> units_;
  bool ascending_ = true;
  std::optional<std::size_t> last_;  // the unit gathered last
};

}  // namespace dtrain::parallel::zero
