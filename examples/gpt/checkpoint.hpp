// Checkpoints of the GPT that any mesh can resume: the whole of every
// weight and of its AdamW moments, one file per unit of the model (the
// embeddings, each block, the head), written by the ranks that hold the
// unit and read by whichever ranks hold it next, each of which keeps its own
// shard.
//
// Format (version 1). A checkpoint is a directory holding
//   manifest        text, written last (a rename), so that a checkpoint
//                   interrupted at any point leaves the previous one whole:
//                     dtrain-gpt-checkpoint 1
//                     step <steps taken>
//                     adam-steps <AdamW's t>
//                     model vocab <V> seq <T> hidden <H> heads <h> layers <L> experts <E> top-k <k>
//                     unit <name> <file> <bytes> <FNV-1a 64 of the file's bytes, 16 hex digits>
//                     ... one line per unit: embed, layer0 .. layer<L-1>, head
//   <unit>-<step>.bin  one unit, little-endian:
//                     "DTGPTU01" (8 bytes), u64 tensor count, then per tensor:
//                     u64 name length, the name, u64 ndim, i64 dims[ndim],
//                     f32 weight[n], f32 first moment[n], f32 second moment[n]
//                     (n the product of dims: the whole tensor, unsharded);
//                     and last a u64 FNV-1a 64 of every byte before it.
// Files of older checkpoints in the directory are removed once the
// manifest names the new ones.
//
// Loading checks, on every rank, before anything changes: the manifest's
// first line and model (another format or another model: "foreign"), each
// needed file's size (truncated) and checksum (against its own trailer and
// the manifest: corrupt, or a file of another checkpoint), its magic, and
// every tensor's name and shape. The ranks then agree: unless every rank
// could read everything, every rank refuses and nothing is changed.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"
#include "param.hpp"

namespace gpt {

struct CheckpointContext {
  const Config *cfg;
  std::vector<Param *> params;  // this rank's, every unit's in model order
  Group tp, ep;
  bool writer;                  // writes the units it holds (one rank per unit)
  dt_comm *world;
  int world_rank;
};

// Collective over the world. Throws (with the failing path) when a file
// cannot be written.
void save_checkpoint(const CheckpointContext &c, const std::string &dir, int64_t step, int64_t adam_steps);

// Collective over the world. Returns an empty string and sets `step` and
// `adam_steps` when every rank loaded its shards, or what is wrong (this
// rank's own reason, or that another rank refused), having changed nothing.
std::string load_checkpoint(const CheckpointContext &c, const std::string &dir, int64_t &step, int64_t &adam_steps);

}  // namespace gpt
