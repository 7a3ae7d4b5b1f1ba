// The planner's step-time model (core/plan, docs/planner.md "Time") applied
// to the workloads dtbench ddp, zero, tp and pipeline run, so that a
// cluster file fitted to this machine (tools/dtplan/calibrate.py) can be
// checked against what those benchmarks measure. GEMMs run at the cluster's
// peak_flops x gemm_efficiency, element-wise work and the optimizer at its
// memory bandwidth, collectives and messages by the alpha-beta model of its
// intra-node link, and each strategy's overlap as the planner assumes it.
// Times are seconds on one rank (the slowest).
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <vector>

namespace dtbench::model {

struct Terms {
  double compute = 0;    // GEMMs, element-wise work, and busy-wait stage work
  double comm = 0;       // communication not hidden behind compute
  double bubble = 0;     // pipeline fill and drain
  double optimizer = 0;  // AdamW
  double step() const { return compute + comm + bubble + optimizer; }
};

// The example MLP (examples/c/mlp): layer widths dims[0] -> ... -> dims.back(),
// `rows` samples on the busiest rank, f32, AdamW.
struct Mlp {
  std::vector<int> dims;
  std::int64_t rows = 0;
  double parameters() const;
};

// dtbench ddp's three modes: sync off, the allreduce after backward, and
// buckets overlapping backward (the planner's ZeRO stage 0).
enum class DdpMode { compute, serial, overlap };
Terms ddp_step(const Mlp& mlp, int ranks, DdpMode mode, const dt_plan_cluster& cluster);

// dtbench zero: one unit per layer, ZeRO stage `stage` on `ranks` ranks.
Terms zero_step(const Mlp& mlp, int ranks, int stage, const dt_plan_cluster& cluster);

// dtbench tp: a column-parallel linear, GELU and a row-parallel linear,
// forward and backward, on `ranks` ranks.
Terms tp_step(std::int64_t tokens, std::int64_t hidden, std::int64_t ffn, int ranks, bool sequence_parallel,
              const dt_plan_cluster& cluster);

// dtbench pipeline under `schedule`: `stages` ranks, `chunks` model chunks
// per rank, each chunk's forward `unit` seconds and its backward two (ZB-H1:
// input and weight gradient one each), `bytes` per message.
Terms pipeline_step(dt_pipeline_schedule_kind schedule, int stages, int chunks, std::int64_t micro_batches, double unit,
                    double bytes, const dt_plan_cluster& cluster);

}  // namespace dtbench::model
