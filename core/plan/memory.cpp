#include "plan/memory.hpp"

#include <algorithm>
#include <cmath>

#include "plan/activations.hpp"

namespace dtrain::plan {

double first_stage_in_flight(const Config& config, std::int64_t micro_batches) {
  const double m = static_cast<double>(micro_batches);
  if (config.pp == 1) return 1.0;  // gradient accumulation: one micro-batch at a time
  switch (config.schedule) {
    case Schedule::gpipe:
      return m;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1:  // its deferred weight gradients keep no more (Qi et al. 2023, ZB-H1)
      return std::min(m, static_cast<double>(config.pp));
    case Schedule::interleaved:
      // Korthikanti et al. 2022, section 4.2: 1F1B's p micro-batches times
      // (1 + (p - 1) / (p v)).
      return std::min(m, config.pp + (config.pp - 1.0) / config.virtual_stages);
  }
  return m;
}

namespace {

std::int64_t bytes(double value) { return static_cast<std::int64_t>(std::ceil(value)); }

std::int64_t states_total(const parallel::zero::MemoryUsage& m) {
  return m.parameters + m.gradients + m.optimizer_state + m.master_weights;
}

}  // namespace

Memory memory_per_gpu(const Transformer& t, const Options& options, const Config& config, const StageStates& states,
                      std::int64_t micro_batches) {
  const LayerSplit split{config.tp, config.cp, options.sequence_parallel && config.tp > 1};
  const double layers = static_cast<double>(t.layers) / config.pp;
  const std::int64_t b = config.micro_batch;
  const double kept = layer_activation_bytes(t, b, split, config.recompute);
  const double whole = layer_activation_bytes(t, b, split, Recompute::none);
  // Recomputing a layer in backward rebuilds its whole activations, once.
  const double working = whole - kept;
  const double first_flight = first_stage_in_flight(config, micro_batches);
  const double last_flight =
      config.pp > 1 && config.schedule == Schedule::gpipe ? static_cast<double>(micro_batches) : 1.0;
  const double logits = logit_bytes(t, b, split);
  const double first_act = first_flight * layers * kept + working + (config.pp == 1 ? logits : 0.0);
  const double last_act = last_flight * layers * kept + working + logits;
  const double first_none = first_flight * layers * whole + (config.pp == 1 ? logits : 0.0);
  const double last_none = last_flight * layers * whole + logits;

  // Buffers in flight: a micro-batch's boundary activation sent and received
  // (pp), the gathered sequence (sequence parallel), dispatched tokens (ep),
  // and ZeRO's unit buffers (stage 2: a unit's gradients; stage 3: two
  // gathered units, the prefetched one included, and a unit's gradients).
  const double shared = split.sequence_parallel ? config.tp : 1.0;
  const double boundary = 2.0 * b * static_cast<double>(t.seq) / config.cp * static_cast<double>(t.hidden);
  double comm = 0;
  if (config.pp > 1) comm += 2.0 * boundary / shared;
  if (split.sequence_parallel) comm += boundary;
  if (config.ep > 1) comm += 2.0 * boundary * static_cast<double>(t.top_k) / shared;
  const double unit_bytes = 2.0 * static_cast<double>(states.largest_unit);
  if (config.zero_stage == 2) comm += unit_bytes;
  if (config.zero_stage == 3) comm += 3.0 * unit_bytes;

  const bool last_heavier = states_total(states.last) + last_act > states_total(states.first) + first_act;
  const parallel::zero::MemoryUsage& s = last_heavier ? states.last : states.first;
  Memory m;
  m.parameters = s.parameters;
  m.gradients = s.gradients;
  m.optimizer_state = s.optimizer_state;
  m.master_weights = s.master_weights;
  m.activations = bytes(last_heavier ? last_act : first_act);
  m.activations_without_recompute = bytes(last_heavier ? last_none : first_none);
  m.communication = bytes(comm);
  m.total = states_total(s) + m.activations + m.communication;
  return m;
}

}  // namespace dtrain::plan
