// A parameter as one rank holds it, and a rank's place in a mesh dimension.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpt {

struct Group {
  dt_comm *comm;
  int rank, size;
};

// How a weight is split: not at all (every rank of the group holds it
// whole), over tp by rows, columns or query-key-value heads (dt_tp_shard),
// or over ep by experts (its first dimension).
enum class Split { replicated, rows, columns, qkv, experts };

struct Param {
  std::string name;
  std::vector<int64_t> full;  // the whole weight's shape
  Split split;
  std::vector<float> w, g;    // this rank's shard and its gradient
  std::vector<int64_t> local; // the shard's shape
  bool counted;               // adds to the global gradient norm on this rank (replicas count once)
};

}  // namespace gpt
