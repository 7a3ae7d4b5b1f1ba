// One configuration's verdict: why it cannot run, or its memory per GPU and
// its step time. docs/planner.md gives every formula.
#pragma once

#include <string>

#include "parallel/zero/memory.hpp"
#include "plan/cluster.hpp"
#include "plan/config.hpp"
#include "plan/transformer.hpp"

namespace dtrain::plan {

// Why a configuration was rejected, from the shape of the mesh to memory.
enum class Reason {
  none = 0,
  gpus,        // dp*tp*pp*cp*ep is not the cluster's GPU count
  heads_tp,    // attention heads (or key/value heads) not divisible by tp
  ffn_tp,      // the MLP width not divisible by tp
  layers_pp,   // layers not divisible by pp * virtual stages
  seq_cp,      // sequence not divisible by 2 * cp (zigzag halves)
  experts_ep,  // experts not divisible by ep, or ep > 1 on a dense model
  batch,       // global batch not divisible by dp * ep * micro-batch
  schedule,    // a schedule that does not fit pp or the micro-batches
  memory,      // more than the usable memory of a GPU
  count
};

const char* reason_name(Reason reason);

struct Verdict {
  Reason reason = Reason::none;
  std::string message;  // empty when accepted

  bool accepted() const { return reason == Reason::none; }
};

// The checks that depend only on the mesh shape (dp, tp, pp, cp, ep).
Verdict check_shape(const Transformer& t, const Cluster& c, const Config& config);

// The model states one GPU holds (ZeRO's parameters, gradients, optimizer
// state and master weights, exactly as a dt_zero over the same units would)
// on the first and on the last pipeline stage; they depend on the shape and
// the ZeRO stage only, so a search computes them once for every variant.
struct StageStates {
  parallel::zero::MemoryUsage first;
  parallel::zero::MemoryUsage last;
  std::int64_t largest_unit = 0;  // elements of the largest unit (a layer's share)
};
StageStates stage_states(const Transformer& t, const Config& config);

// The whole verdict: shape, schedule and batch checks, then the estimate
// (filled in `out` whenever the configuration can be laid out, including
// when it is rejected for memory).
Verdict evaluate(const Transformer& t, const Cluster& c, const Options& options, const Config& config, Estimate& out);
// The same with the shape already checked and its states computed.
Verdict evaluate_variant(const Transformer& t, const Cluster& c, const Options& options, const Config& config,
                         const StageStates& states, Estimate& out);

}  // namespace dtrain::plan
