#include "plan/estimate.hpp"

#include <algorithm>
#include <vector>

#include "parallel/zero/footprint.hpp"
#include "parallel/zero/layout.hpp"
#include "plan/memory.hpp"
#include "plan/step_time.hpp"

namespace dtrain::plan {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

Verdict reject(Reason reason, std::string message) { return {reason, std::move(message)}; }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

constexpr int kAdamStateBuffers = 2;  // AdamW's two moments

}  // namespace

const char* reason_name(Reason reason) {
  switch (reason) {
    case Reason::none:
      return "accepted";
    case Reason::gpus:
      return "gpu count";
    case Reason::heads_tp:
      return "heads / tp";
    case Reason::ffn_tp:
      return "ffn / tp";
    case Reason::layers_pp:
      return "layers / pp";
    case Reason::seq_cp:
      return "sequence / cp";
    case Reason::experts_ep:
      return "experts / ep";
    case Reason::batch:
      return "batch";
    case Reason::schedule:
      return "schedule";
    case Reason::memory:
      return "memory";
    case Reason::count:
      break;
  }
  return "unknown";
}

Verdict check_shape(const Transformer& t, const Cluster& c, const Config& config) {
  const int dims[] = {config.dp, config.tp, config.pp, config.cp, config.ep};
  for (int d : dims) {
    if (d < 1) return reject(Reason::gpus, "every mesh size must be >= 1");
  }
  if (static_cast<std::int64_t>(config.gpus()) != c.gpus()) {
    return reject(Reason::gpus,
                  "dp*tp*pp*cp*ep = " + str(config.gpus()) + " but the cluster has " + str(c.gpus()) + " GPUs");
  }
  if (t.heads % config.tp != 0 || t.kv_heads % config.tp != 0) {
    return reject(Reason::heads_tp, str(t.heads) + " heads (" + str(t.kv_heads) +
                                        " key/value heads) are not divisible by tp = " + str(config.tp));
  }
  if (t.ffn % config.tp != 0) {
    return reject(Reason::ffn_tp, "ffn_hidden " + str(t.ffn) + " is not divisible by tp = " + str(config.tp));
  }
  if (t.layers % config.pp != 0) {
    return reject(Reason::layers_pp, str(t.layers) + " layers are not divisible by pp = " + str(config.pp));
  }
  if (config.cp > 1 && t.seq % (2 * config.cp) != 0) {
    return reject(Reason::seq_cp, "sequence length " + str(t.seq) +
                                      " is not divisible by 2*cp = " + str(2 * config.cp) + " (zigzag halves)");
  }
  if (!t.moe() && config.ep > 1) {
    return reject(Reason::experts_ep, "ep = " + str(config.ep) + " on a dense model (experts = 1)");
  }
  if (t.experts % config.ep != 0) {
    return reject(Reason::experts_ep, str(t.experts) + " experts are not divisible by ep = " + str(config.ep));
  }
  return {};
}

StageStates stage_states(const Transformer& t, const Config& config) {
  using parallel::zero::Layout;
  // Units as a trainer would give dt_zero: one per layer (dense part and,
  // for MoE, the local experts), one for the embedding; each split evenly
  // over tp (rounded up) and sharded over the ranks that reduce it.
  const std::int64_t layers = t.layers / config.pp;
  // A dense model's MLP is part of its layer's unit.
  const std::int64_t dense =
      ceil_div(layer_dense_parameters(t) + (t.moe() ? 0 : layer_expert_parameters(t)), config.tp);
  const std::int64_t experts = ceil_div(layer_expert_parameters(t), std::int64_t{config.tp} * config.ep);
  const std::int64_t word = ceil_div(t.vocab * t.hidden, config.tp);
  const std::int64_t position = t.seq * t.hidden;
  const int dense_shards = config.dp * config.cp * config.ep;
  const int expert_shards = config.dp * config.cp;
  const int stage = config.zero_stage;

  auto states = [&](std::int64_t embedding) {
    std::vector<std::int64_t> dense_units(static_cast<std::size_t>(layers), dense);
    dense_units.push_back(embedding);
    const std::vector<std::int64_t> expert_units(t.moe() ? static_cast<std::size_t>(layers) : 0, experts);
    auto usage = [&](const std::vector<std::int64_t>& units, int shards) {
      // Stage 0 shards nothing, as dt_zero lays it out.
      const Layout layout(units, std::vector<std::size_t>(units.size(), 1), stage == 0 ? 1 : shards, 0);
      return parallel::zero::footprint(layout, stage, DType::bf16, kAdamStateBuffers);
    };
    parallel::zero::MemoryUsage m = usage(dense_units, dense_shards);
    if (!expert_units.empty()) {
      const parallel::zero::MemoryUsage e = usage(expert_units, expert_shards);
      m.parameters += e.parameters;
      m.gradients += e.gradients;
      m.optimizer_state += e.optimizer_state;
      m.master_weights += e.master_weights;
      m.padding += e.padding;
      m.peak += e.peak;
    }
    return m;
  };
  StageStates s;
  // The first stage holds the word and position embeddings; the last one the
  // output layer (the word embedding again, tied) and the final norm; with
  // one stage they are the same tensors.
  s.first = states(word + position + (config.pp == 1 ? final_norm_parameters(t) : 0));
  s.last = config.pp == 1 ? s.first : states(word + final_norm_parameters(t));
  s.largest_unit = std::max({dense, t.moe() ? experts : 0, word + position});
  return s;
}

Verdict evaluate_variant(const Transformer& t, const Cluster& c, const Options& options, const Config& config,
                         const StageStates& states, Estimate& out) {
  const std::int64_t replicas = std::int64_t{config.dp} * config.ep;
  if (config.micro_batch < 1 || options.global_batch % (replicas * config.micro_batch) != 0) {
    return reject(Reason::batch, "global batch " + str(options.global_batch) + " is not divisible by dp*ep = " +
                                     str(replicas) + " times micro-batch " + str(config.micro_batch));
  }
  const std::int64_t m = options.global_batch / (replicas * config.micro_batch);
  const int v = config.virtual_stages;
  if (config.schedule == Schedule::interleaved) {
    if (config.pp < 2 || v < 2) {
      return reject(Reason::schedule, "interleaved 1F1B needs pp >= 2 and virtual stages >= 2 (pp = " + str(config.pp) +
                                          ", v = " + str(v) + ")");
    }
    if (m % config.pp != 0) {
      return reject(Reason::schedule, "interleaved 1F1B needs the micro-batches (" + str(m) +
                                          ") to be a multiple of pp = " + str(config.pp));
    }
  } else if (v != 1) {
    return reject(Reason::schedule, "only interleaved 1F1B has virtual stages (v = " + str(v) + ")");
  }
  if (t.layers % (std::int64_t{config.pp} * v) != 0) {
    return reject(Reason::layers_pp, str(t.layers) + " layers are not divisible by pp*v = " + str(config.pp * v));
  }
  out = Estimate{};
  out.config = config;
  out.micro_batches = m;
  out.memory = memory_per_gpu(t, options, config, states, m);
  out.time = step_time(t, c, options, config, states, m);
  const double batch = static_cast<double>(options.global_batch);
  out.model_flops = model_flops(t, batch);
  out.hardware_flops = hardware_flops(t, batch, config.recompute);
  const double gpus = config.gpus();
  out.mfu = out.model_flops / (out.time.step * gpus * c.peak_flops);
  out.tflops_per_gpu = out.hardware_flops / (out.time.step * gpus) / 1e12;
  const double usable = c.gpu_memory * options.memory_fraction;
  if (static_cast<double>(out.memory.total) > usable) {
    return reject(Reason::memory, "needs " + std::to_string(out.memory.total / 1000000) + " MB per GPU; " +
                                      std::to_string(static_cast<std::int64_t>(usable / 1e6)) + " MB usable (" +
                                      std::to_string(static_cast<int>(options.memory_fraction * 100 + 0.5)) + " % of " +
                                      std::to_string(static_cast<std::int64_t>(c.gpu_memory / 1e6)) + " MB)");
  }
  return {};
}

Verdict evaluate(const Transformer& t, const Cluster& c, const Options& options, const Config& config, Estimate& out) {
  Verdict shape = check_shape(t, c, config);
  if (!shape.accepted()) return shape;
  return evaluate_variant(t, c, options, config, stage_states(t, config), out);
}

}  // namespace dtrain::plan
