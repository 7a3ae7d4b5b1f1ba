// The metadata file of a ZeRO checkpoint: what the global tensors are, how
// the optimizer was configured, and which elements each shard file holds.
//
// It is text, one fact per line, so that a person can read what a checkpoint
// contains; its last line is the SHA-256 of every line before it, so that a
// truncated or edited file is refused rather than half-believed:
//
//   dtrain-zero-checkpoint 2
//   generation 5f0c9a1e2b3d4c6f    (names the shard files: shard-<r>-<generation>.bin)
//   world 4
//   stage 2
//   dtype bfloat16
//   optimizer adamw
//   state_buffers 2
//   steps 10
//   loss_scale 0x1p+16
//   clean_steps 3
//   elements 1234
//   parameters 2
//   parameter 0 16,8
//   parameter 1 -                  (a scalar: no dimensions)
//   shard 0 <bytes> <sha256> <runs> <first> <count> ...
//   ...
//   sha256 <hex>
//
// Format 1, written by earlier versions, has no generation line and names
// its shard files shard-<r>.bin; it is still read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.hpp"
#include "optim/config.hpp"
#include "optim/loss_scaler.hpp"
#include "device/slot.hpp"

namespace dtrain::parallel::zero {

struct ElementRun {
  std::int64_t first = 0;
  std::int64_t count = 0;

  bool operator==(const ElementRun&) const = default;
};

// One shard file as the metadata records it.
struct ShardRecord {
  std::int64_t bytes = 0;
  std::string sha256;  // lowercase hex
  std::vector<ElementRun> runs;
};

struct Metadata {
  std::string generation;  // empty in format 1
  int world = 0;
  int stage = 0;
  DType dtype = DType::f32;
  optim::Kind kind = optim::Kind::adamw;
  int state_buffers = 0;
  std::int64_t steps = 0;
  optim::LossScalerState scaler;
  std::vector<std::vector<std::int64_t>> shapes;  // one per parameter, registration order
  std::vector<ShardRecord> shards;                // one per rank of the saving world

  // Elements of all parameters together.
  std::int64_t elements() const;
};

std::string format_metadata(const Metadata& metadata);

// Throws DT_ERR_INVALID_ARGUMENT naming `path` and the line for anything
// malformed, a wrong checksum, or shard runs that do not cover every element
// exactly once.
Metadata parse_metadata(const std::string& text, const std::string& path);

}  // namespace dtrain::parallel::zero
