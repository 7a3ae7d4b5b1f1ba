// Step time of a configuration on the slowest pipeline stage: compute
// (GEMMs at the cluster's GEMM efficiency, everything else bound by memory
// bandwidth), recomputation, the pipeline bubble, and the communication of
// each mesh dimension that compute does not hide. docs/planner.md, "Time".
#pragma once

#include "plan/cluster.hpp"
#include "plan/config.hpp"
#include "plan/estimate.hpp"

namespace dtrain::plan {

// The idle share of a pipeline step relative to its work: (p - 1) / (v m)
// (Narayanan et al. 2021, sections 2.2.1 and 2.2.2); GPipe and 1F1B alike.
double bubble_ratio(int pp, int virtual_stages, std::int64_t micro_batches);

Time step_time(const Transformer& t, const Cluster& c, const Options& options, const Config& config,
               const StageStates& states, std::int64_t micro_batches);

}  // namespace dtrain::plan
