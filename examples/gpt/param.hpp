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
  std::vector<float> m, v;    // AdamW's moments of the shard (empty before its first step)
  std::vector<int64_t> local; // the shard's shape
  bool counted;               // adds to the global gradient norm on this rank (replicas count once)
};

// This rank's shard of `full` (the whole weight, in `p.full`'s shape) into
// `local` (p.local's shape). Local.
void shard(const Param &p, const std::vector<float> &full, std::vector<float> &local, Group tp, Group ep,
           int heads);
// The whole weight from every rank's `local` shard: collective over tp (for
// the tp splits) or ep (experts); a replicated weight is copied.
std::vector<float> unshard(const Param &p, const std::vector<float> &local, Group tp, Group ep, int heads);

// The checkpoint unit a parameter belongs to: "embed", "layer<l>" or "head".
std::string unit_of(const std::string &name);

}  // namespace gpt
