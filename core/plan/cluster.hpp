// The machines a plan is for: what one GPU computes and holds, and how fast
// GPUs talk inside a node and across nodes (an alpha-beta model per link).
#pragma once

#include <string>

namespace dtrain::plan {

struct Link {
  double bandwidth = 0;  // bytes/s per GPU, each direction
  double latency = 0;    // seconds per message (alpha)
};

struct Cluster {
  int nodes = 0;
  int gpus_per_node = 0;
  double gpu_memory = 0;        // bytes
  double peak_flops = 0;        // dense 16-bit FLOP/s per GPU
  double memory_bandwidth = 0;  // bytes/s of the GPU's own memory
  double gemm_efficiency = 0;   // share of peak_flops large GEMMs reach
  Link intra;                   // between GPUs of a node (NVLink)
  Link inter;                   // between nodes (InfiniBand, RoCE), per GPU
  // The share of a collective's time that compute running meanwhile can
  // hide, [0, 1]: 1 where copy engines or spare SMs move the data while the
  // GPU computes (every preset); 0 for CPU ranks with no spare core, whose
  // progress thread and shared-memory copies take the core the compute needs.
  double overlap = 1;

  int gpus() const { return nodes * gpus_per_node; }
};

// Throws DT_ERR_INVALID_ARGUMENT naming the first field out of range.
void check(const Cluster& c);

// A preset node kind ("a100", "h100", "h200"; see docs/planner.md for the
// numbers and where they come from) times `nodes`. Throws
// DT_ERR_INVALID_ARGUMENT for another name, listing the known ones.
Cluster preset(const std::string& name, int nodes);

// Reads a cluster file: lines "key = value", '#' comments, blank lines; an
// optional "preset = NAME" first sets every field from the preset, and
// later keys override it. Keys are the Cluster fields (intra_bandwidth,
// intra_latency, inter_bandwidth, inter_latency for the links; overlap,
// when absent, is 1); values are
// numbers (1e9, 80e9). Throws DT_ERR_IO for an unreadable file and
// DT_ERR_INVALID_ARGUMENT naming the line of a bad one.
Cluster load_cluster(const std::string& path);
Cluster parse_cluster(const std::string& text, const std::string& where);

}  // namespace dtrain::plan
