// The files of a ZeRO checkpoint: their names, whole-file reads and
// atomic writes, the SHA-256 that ties each shard file to the metadata, and
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
std::string shard_path(const std::string& dir, int rank);

std::string sha256_hex(std::string_view bytes);

// The whole file. Throws DT_ERR_INVALID_ARGUMENT naming it when it cannot be read.
std::string read_file(const std::string& path);
// Writes through a temporary file and a rename, so a reader sees the old
// file or the new one, never a part. Throws DT_ERR_IO naming the path.
void write_file_atomically(const std::string& path, std::string_view bytes);

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
