#include "plan/step_time.hpp"

#include <algorithm>

#include "plan/activations.hpp"
#include "plan/collectives.hpp"

namespace dtrain::plan {

double bubble_ratio(Schedule schedule, int pp, int virtual_stages, std::int64_t micro_batches) {
  const double m = static_cast<double>(micro_batches);
  if (schedule == Schedule::zb_h1) return (pp - 1.0 + std::max(0.0, pp - m)) / (3.0 * m);
  return (pp - 1.0) / (static_cast<double>(virtual_stages) * m);
}

double exposed(double communication, double compute, const Cluster& c) {
  return communication - std::min(c.overlap * communication, compute);
}

namespace {

constexpr double kElement = 2.0;  // bytes of a 16-bit activation, gradient or parameter

// One micro-batch on one GPU, per layer unless said otherwise.
struct MicroBatch {
  double forward = 0;    // a layer's forward
  double recompute = 0;  // what recomputation adds to a layer's backward
  double logits = 0;     // the output layer, forward and backward (last stage)
  double tp = 0, cp = 0, ep = 0;
};

MicroBatch micro_batch_costs(const Transformer& t, const Cluster& c, const Options& options, const Config& config) {
  const LayerSplit split{config.tp, config.cp, options.sequence_parallel && config.tp > 1};
  const double tokens = static_cast<double>(config.micro_batch) * static_cast<double>(t.seq) / config.cp;
  const double flop_rate = c.peak_flops * c.gemm_efficiency;
  const double gemm = tokens * layer_gemm_flops(t) / config.tp / flop_rate;
  const double core = tokens * attention_core_flops(t) / config.tp / flop_rate;
  // Element-wise work (norms, activations, softmax, dropout) is bound by
  // memory: every activation byte kept is written once and read once.
  const double whole = layer_activation_bytes(t, config.micro_batch, split, Recompute::none);
  const double selective = layer_activation_bytes(t, config.micro_batch, split, Recompute::selective);
  const double memory_rate = c.memory_bandwidth;
  MicroBatch mb;
  mb.forward = gemm + core + 2.0 * whole / memory_rate;
  if (config.recompute == Recompute::full) mb.recompute = mb.forward;
  if (config.recompute == Recompute::selective) mb.recompute = core + 2.0 * (whole - selective) / memory_rate;
  mb.logits = 3.0 * tokens * logit_flops(t) / config.tp / flop_rate +
              2.0 * logit_bytes(t, config.micro_batch, split) / memory_rate;

  // Collectives per layer: forward 2, backward 2, and 2 more when full
  // recomputation runs the forward again.
  const double passes = config.recompute == Recompute::full ? 6.0 : 4.0;
  const bool sp = split.sequence_parallel;
  const double activation = tokens * static_cast<double>(t.hidden) * kElement;
  const Group tp_group = group_of(config.tp, 1, c.gpus_per_node);
  // Sequence parallel turns each allreduce into an allgather and a reduce-scatter.
  const double tp_one = sp ? allgather(tp_group, activation, c) + reduce_scatter(tp_group, activation, c)
                           : allreduce(tp_group, activation, c);
  mb.tp = passes * tp_one;
  if (t.moe()) {
    const Group ep_group = group_of(config.ep, config.tp * config.cp, c.gpus_per_node);
    const double routed = activation * static_cast<double>(t.top_k) / (sp ? config.tp : 1.0);
    mb.ep = passes * alltoall(ep_group, routed, c);
  }
  if (config.cp > 1) {
    // Ring attention: cp - 1 steps, each passing a K and V block while the
    // attention of the block in hand is computed; only the excess shows.
    const bool same_node = config.tp * config.cp <= c.gpus_per_node;
    const double kv_block = 2.0 * tokens * static_cast<double>(t.kv_width()) / config.tp * kElement;
    const double block_compute = core / config.cp;
    const double forward = (config.cp - 1) * exposed(send(kv_block, same_node, c), block_compute, c);
    // Backward passes K, V, dK and dV and computes twice as much per block.
    const double backward = (config.cp - 1) * exposed(send(2 * kv_block, same_node, c), 2 * block_compute, c);
    mb.cp = forward + backward + (config.recompute == Recompute::full ? forward : 0.0);
  }
  return mb;
}

}  // namespace

double pipeline_send_time(int pp, int virtual_stages, double micro_batches, double bytes, bool same_node,
                          const Cluster& c) {
  return 2.0 * (micro_batches * virtual_stages + pp - 1) * send(bytes, same_node, c);
}

double data_parallel_time(int zero_stage, const Group& g, double bytes, double forward, double backward,
                          double micro_batches, const Cluster& c) {
  if (g.size == 1) return 0;
  const double m = micro_batches;
  switch (zero_stage) {
    case 0:
      return exposed(allreduce(g, bytes, c), backward, c);
    case 1:
      return exposed(allreduce(g, bytes, c), backward, c) + allgather(g, bytes, c);
    case 2:
      return m * exposed(reduce_scatter(g, bytes, c), backward, c) + allgather(g, bytes, c);
    default:
      return m * (exposed(allgather(g, bytes, c), forward, c) +
                  exposed(allgather(g, bytes, c) + reduce_scatter(g, bytes, c), backward, c));
  }
}

double adamw_time(double elements, const Cluster& c) {
  // f32 weight and two moments in and out (24 bytes) and 4 bytes of
  // gradient in and parameter out: a 16-bit gradient and parameter beside
  // an f32 master weight, or an f32 gradient where the parameter is the
  // f32 weight itself.
  return elements * 28.0 / c.memory_bandwidth;
}

Time step_time(const Transformer& t, const Cluster& c, const Options& options, const Config& config,
               const StageStates& states, std::int64_t micro_batches) {
  const MicroBatch mb = micro_batch_costs(t, c, options, config);
  const double layers = static_cast<double>(t.layers) / config.pp;
  const double m = static_cast<double>(micro_batches);
  Time time;
  // The last stage is the slowest: its layers plus the output layer.
  time.compute = m * (layers * 3.0 * mb.forward + mb.logits);
  time.recompute = m * layers * mb.recompute;
  time.tp = m * layers * mb.tp;
  time.cp = m * layers * mb.cp;
  time.ep = m * layers * mb.ep;
  const double per_micro_batch = (time.compute + time.recompute + time.tp + time.cp + time.ep) / m;
  if (config.pp > 1) {
    time.bubble = bubble_ratio(config.schedule, config.pp, config.virtual_stages, micro_batches) * m * per_micro_batch;
    // Each micro-batch crosses every chunk boundary forward and backward;
    // pipeline ranks are the farthest apart in the mesh.
    const int stride = config.tp * config.cp * config.ep * config.dp;
    const double shared = options.sequence_parallel && config.tp > 1 ? config.tp : 1.0;
    const double boundary =
        static_cast<double>(config.micro_batch) * t.seq / config.cp * static_cast<double>(t.hidden) * kElement / shared;
    time.pp = pipeline_send_time(config.pp, config.virtual_stages, m, boundary, stride < c.gpus_per_node, c);
  }

  // Data parallel: ZeRO's collectives over the ranks that share parameters,
  // on the parameters of the heavier stage (bytes of 16-bit elements).
  const parallel::zero::MemoryUsage& s = states.last.parameters >= states.first.parameters ? states.last : states.first;
  const int replicas = config.dp * config.cp * config.ep;
  const Group dp_group = group_of(replicas, config.tp, c.gpus_per_node);
  const double params = static_cast<double>(config.zero_stage == 3 ? s.parameters * replicas : s.parameters);
  const double backward = layers * 2.0 * mb.forward + layers * mb.recompute;
  const double forward = layers * mb.forward;
  time.dp = data_parallel_time(config.zero_stage, dp_group, params, forward, backward, m, c);
  time.optimizer = adamw_time(static_cast<double>(s.master_weights) / 4.0, c);
  time.step =
      time.compute + time.recompute + time.bubble + time.tp + time.cp + time.ep + time.pp + time.dp + time.optimizer;
  return time;
}

}  // namespace dtrain::plan
