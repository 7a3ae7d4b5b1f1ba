// The files of a ZeRO checkpoint: their names, whole-file reads, the
// removal of files no checkpoint uses any more, the SHA-256 that ties each shard file to the metadata, and
// the binary layout of a shard file:
//
//   "DTZSHRD1"                          8 bytes
//   rank, world, state_buffers, 0       4 × uint32
//   run count                           uint64
//   runs                                (int64 first, int64 count) each
//   weights                             float32, every run's in run order
//   each state buffer                   float32, likewise
//
// Numbers are in the byte order of the machine that wrote them; a machine of
// the other order finds the magic reversed and refuses the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parallel/zero/checkpoint_metadata.hpp"

namespace dtrain::parallel::zero {

std::string metadata_path(const std::string& dir);
// "shard-<rank>-<generation>.bin"; "shard-<rank>.bin" for the empty
// generation of format 1.
std::string shard_path(const std::string& dir, int rank, const std::string& generation);
// A new generation: 16 random hex digits, for the files of one save.
std::string new_generation();

// Removes the checkpoint files in `dir` that the metadata of `generation`
// does not name: shard files of other generations and temporary files left
// by interrupted saves. Files of other names are not touched; a file that
// cannot be removed is logged and left. Returns how many were removed.
int remove_stale_files(const std::string& dir, const std::string& generation);

std::string sha256_hex(std::string_view bytes);

// The whole file. Throws DT_ERR_INVALID_ARGUMENT naming it when it cannot be read.
std::string read_file(const std::string& path);

// A shard's elements in memory, laid out as in the file: run k's weights
// are weights[offset_k .. offset_k + count_k), where offset_k is the sum of
// the earlier runs' counts, and likewise for each state buffer.
struct ShardData {
  int rank = 0;
  int world = 0;
  int state_buffers = 0;
  std::vector<ElementRun> runs;
  std::vector<float> weights;
  std::vector<std::vector<float>> state;  // state_buffers vectors
};

std::string encode_shard(const ShardData& shard);
// Throws DT_ERR_INVALID_ARGUMENT naming `path` when the bytes are not a
// shard file or disagree with `expected` (the metadata's record of it).
ShardData decode_shard(std::string_view bytes, const std::string& path, int rank, int world,
                       int state_buffers, const ShardRecord& expected);

}  // namespace dtrain::parallel::zero
