#include "step_model.hpp"

#include <algorithm>

#include "plan/cluster.hpp"
#include "plan/collectives.hpp"
#include "plan/step_time.hpp"

namespace dtbench::model {

namespace {

namespace plan = dtrain::plan;

constexpr double kF32 = 4.0;

plan::Cluster convert(const dt_plan_cluster& c) {
  plan::Cluster p;
  p.nodes = c.nodes;
  p.gpus_per_node = c.gpus_per_node;
  p.gpu_memory = c.gpu_memory;
  p.peak_flops = c.peak_flops;
  p.memory_bandwidth = c.memory_bandwidth;
  p.gemm_efficiency = c.gemm_efficiency;
  p.intra = {c.intra_bandwidth, c.intra_latency};
  p.inter = {c.inter_bandwidth, c.inter_latency};
  p.overlap = c.overlap;
  return p;
}

double gemm_rate(const plan::Cluster& c) { return c.peak_flops * c.gemm_efficiency; }

// The benchmarks' ranks share one host: one group on the intra-node link.
plan::Group host_group(int ranks) { return {ranks, ranks}; }

// One MLP step's compute on one rank, split as ZeRO and DDP overlap it.
struct Passes {
  double forward = 0, backward = 0;
};

Passes mlp_passes(const Mlp& mlp, const plan::Cluster& c) {
  const double n = static_cast<double>(mlp.rows);
  double gemm_forward = 0, gemm_backward = 0, activations = 0;
  for (std::size_t l = 0; l + 1 < mlp.dims.size(); ++l) {
    const double product = 2.0 * n * mlp.dims[l] * mlp.dims[l + 1];
    gemm_forward += product;
    // The weight gradient, and the input gradient except for the first layer's.
    gemm_backward += l == 0 ? product : 2.0 * product;
    activations += n * mlp.dims[l + 1] * kF32;
  }
  // Element-wise work (bias, ReLU, softmax) is bound by memory, as in the
  // planner: every activation byte written once and read once forward, and
  // twice that backward.
  const double elementwise = 2.0 * activations / c.memory_bandwidth;
  return {gemm_forward / gemm_rate(c) + elementwise, gemm_backward / gemm_rate(c) + 2.0 * elementwise};
}

}  // namespace

double Mlp::parameters() const {
  double p = 0;
  for (std::size_t l = 0; l + 1 < dims.size(); ++l) p += static_cast<double>(dims[l]) * dims[l + 1] + dims[l + 1];
  return p;
}

Terms ddp_step(const Mlp& mlp, int ranks, DdpMode mode, const dt_plan_cluster& cluster) {
  const plan::Cluster c = convert(cluster);
  const Passes p = mlp_passes(mlp, c);
  const double gradients = mlp.parameters() * kF32;
  Terms t;
  t.compute = p.forward + p.backward;
  t.optimizer = plan::adamw_time(mlp.parameters(), c);
  if (mode == DdpMode::serial) t.comm = plan::allreduce(host_group(ranks), gradients, c);
  if (mode == DdpMode::overlap) {
    t.comm = plan::data_parallel_time(0, host_group(ranks), gradients, p.forward, p.backward, 1, c);
  }
  return t;
}

Terms zero_step(const Mlp& mlp, int ranks, int stage, const dt_plan_cluster& cluster) {
  const plan::Cluster c = convert(cluster);
  const Passes p = mlp_passes(mlp, c);
  Terms t;
  t.compute = p.forward + p.backward;
  t.comm = plan::data_parallel_time(stage, host_group(ranks), mlp.parameters() * kF32, p.forward, p.backward, 1, c);
  // Stage 0 updates every element on every rank; the others a shard.
  t.optimizer = plan::adamw_time(mlp.parameters() / (stage == 0 ? 1 : ranks), c);
  return t;
}

Terms tp_step(std::int64_t tokens, std::int64_t hidden, std::int64_t ffn, int ranks, bool sequence_parallel,
              const dt_plan_cluster& cluster) {
  const plan::Cluster c = convert(cluster);
  const double rows = static_cast<double>(tokens), h = static_cast<double>(hidden);
  const double f = static_cast<double>(ffn) / ranks;
  Terms t;
  // Six GEMMs of 2 T H F/tp FLOPs; GELU forward reads h and writes a,
  // backward reads da and h and writes dh.
  t.compute = 12.0 * rows * h * f / gemm_rate(c) + 5.0 * kF32 * rows * f / c.memory_bandwidth;
  // One reduction forward (y) and one backward (dx) of [T, H], not
  // overlapped (the planner's tp term); with sequence parallelism each is an
  // allgather and a reduce-scatter.
  const plan::Group g = host_group(ranks);
  const double activation = rows * h * kF32;
  const double one = sequence_parallel ? plan::allgather(g, activation, c) + plan::reduce_scatter(g, activation, c)
                                       : plan::allreduce(g, activation, c);
  t.comm = 2.0 * one;
  return t;
}

Terms pipeline_step(dt_pipeline_schedule_kind schedule, int stages, int chunks, std::int64_t micro_batches, double unit,
                    double bytes, const dt_plan_cluster& cluster) {
  const plan::Cluster c = convert(cluster);
  const double m = static_cast<double>(micro_batches);
  Terms t;
  // Every micro-batch's forward (one unit) and backward (two) of each chunk.
  t.compute = m * chunks * 3.0 * unit;
  t.bubble = plan::bubble_ratio(static_cast<plan::Schedule>(schedule), stages, chunks, micro_batches) * t.compute;
  t.comm = plan::pipeline_send_time(stages, chunks, m, bytes, true, c);
  return t;
}

}  // namespace dtbench::model
