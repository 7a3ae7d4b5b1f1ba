// Checkpoints of a sharded model that load on any number of ranks.
//
// What is saved is what only the optimizer's ranks know: the float32 weights
// each rank updates (master weights of 16-bit parameters, or the float32
// parameters themselves) and their optimizer state, addressed by global
// element index: the position in the concatenation of every parameter's
// elements in registration order, with no padding. That index does not
// depend on the world size, the stage or the units, so a loader maps any
// saved shard onto any new one.
//
// Files in the checkpoint directory:
//   metadata                   rank 0's description of the global tensors
//                              (text), naming the generation of the shards
//   shard-<r>-<generation>.bin rank r's runs of elements; the metadata
//                              holds a SHA-256 of each
//
// A save writes a new generation's shard files beside the old ones and
// commits by replacing the metadata (save_checkpoint() says how); a reader
// follows the metadata and never looks at files it does not name.
//
// A load reads everything it needs into scratch memory and checks it first;
// the ranks then agree, and only when every rank succeeded does any rank
// write into its shards. A refused checkpoint changes nothing anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.hpp"
#include "comm/communicator.hpp"
#include "device/queue.hpp"
#include "optim/config.hpp"
#include "optim/loss_scaler.hpp"
#include "device/slot.hpp"
#include "base/tensor_list.hpp"

namespace dtrain::parallel::zero {

// Consecutive global elements [global_first, global_first + count) that this
// rank updates, and where their float32 values live in its memory.
struct ShardRun {
  std::int64_t global_first = 0;
  std::int64_t count = 0;
  float* weights = nullptr;                          // master weights, or the f32 parameters
  float* state[device::kMaxStateBuffers] = {};        // the first `state_buffers` are set
};

// A rank's view of its sharded model, as a checkpoint sees it.
struct CheckpointView {
  int stage = 0;
  DType dtype = DType::f32;                          // the parameters' dtype
  optim::Kind kind = optim::Kind::adamw;
  int state_buffers = 0;                             // optim::state_buffers(config)
  std::vector<TensorLayout> parameters;      // registration order
  std::vector<ShardRun> runs;                        // ascending global_first, disjoint, padding excluded
  std::int64_t steps = 0;
  optim::LossScalerState scaler;
  // The runs' memory, which saves copy out of and loads into through it.
  device::Queue* queue = nullptr;
};

// The counters a load restores beside the runs' contents.
struct RestoredCounters {
  std::int64_t steps = 0;
  optim::LossScalerState scaler;
};

// Collective over `comm`. Every rank writes its shard file; rank 0 then
// commits the metadata. Throws DT_ERR_IO on every rank when any rank failed
// to write; what was in `dir` stays loadable unless rank 0 committed.
void save_checkpoint(comm::Communicator& comm, const CheckpointView& view, const std::string& dir);

// Collective over `comm`. Fills every run of `into` (weights and state) from
// the checkpoint in `dir` and returns the counters, or throws
// DT_ERR_INVALID_ARGUMENT on every rank (naming the rank, the file and what
// is wrong) with nothing written: a missing, truncated or corrupt file, or a
// checkpoint of other parameters or another optimizer kind.
RestoredCounters load_checkpoint(comm::Communicator& comm, const CheckpointView& into, const std::string& dir);

}  // namespace dtrain::parallel::zero
