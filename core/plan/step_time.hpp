// Step time of a configuration on the slowest pipeline stage: compute
// (GEMMs at the cluster's GEMM efficiency, everything else bound by memory
// bandwidth), recomputation, the pipeline bubble, and the communication of
// each mesh dimension that compute does not hide. docs/planner.md, "Time".
#pragma once

#include "plan/cluster.hpp"
#include "plan/collectives.hpp"
#include "plan/config.hpp"
#include "plan/estimate.hpp"

namespace dtrain::plan {

// The idle time of a pipeline step relative to its work: (p - 1) / (v m)
// for GPipe, 1F1B and interleaved 1F1B (Narayanan et al. 2021, sections
// 2.2.1 and 2.2.2); (p - 1 + max(0, p - m)) / (3 m) for ZB-H1, whose
// backward splits into an input and a weight gradient each as long as the
// forward, the weight gradients filling all but one forward's worth of each
// rank's wait (Qi et al. 2023; dt_pipeline_schedule_bubble_fraction()).
double bubble_ratio(Schedule schedule, int pp, int virtual_stages, std::int64_t micro_batches);

// Each of `micro_batches` crossing each of the pp * virtual_stages chunk
// boundaries forward and backward: 2 (m v + p - 1) messages of `bytes`
// on the critical path.
double pipeline_send_time(int pp, int virtual_stages, double micro_batches, double bytes, bool same_node,
                          const Cluster& c);

// What shows of `communication` seconds issued beside `compute` seconds of
// work: the cluster's overlap share of it hides, as far as the compute lasts.
double exposed(double communication, double compute, const Cluster& c);

// The data-parallel communication a step of `micro_batches` does not hide,
// as dt_zero runs ZeRO stage `zero_stage` over group `g` on `bytes` of
// parameters (a replica's, not a shard): stage 0 allreduces the gradients
// once, behind the last micro-batch's `backward`; stage 1 also allgathers
// the updated parameters; stage 2 reduce-scatters per micro-batch and
// allgathers once; stage 3 per micro-batch allgathers behind `forward`, and
// allgathers and reduce-scatters behind `backward`.
double data_parallel_time(int zero_stage, const Group& g, double bytes, double forward, double backward,
                          double micro_batches, const Cluster& c);

// AdamW updating `elements` at the memory bandwidth: 28 bytes each.
double adamw_time(double elements, const Cluster& c);

Time step_time(const Transformer& t, const Cluster& c, const Options& options, const Config& config,
               const StageStates& states, std::int64_t micro_batches);

}  // namespace dtrain::plan
