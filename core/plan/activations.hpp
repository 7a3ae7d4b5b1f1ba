// Activation memory of a transformer layer (Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models", eq. 1-5
// and table 2), generalised to grouped-query attention, any MLP width and
// MoE, and how many micro-batches of it a pipeline stage holds.
// docs/planner.md, "Activations".
#pragma once

#include <cstdint>

#include "plan/transformer.hpp"

namespace dtrain::plan {

struct LayerSplit {
  int tp = 1;
  int cp = 1;
  bool sequence_parallel = true;
};

// Bytes one layer keeps for backward, for `micro_batch` sequences, with
// 16-bit activations and 1-byte dropout masks. `recompute` none keeps all;
// selective drops the attention scores (recomputed in backward); full keeps
// only the layer's input. With cp > 1 the attention is blockwise and keeps
// no score matrix.
double layer_activation_bytes(const Transformer& t, std::int64_t micro_batch, const LayerSplit& split,
                              Recompute recompute);

// The float32 logits of one micro-batch on the last stage, split over tp.
double logit_bytes(const Transformer& t, std::int64_t micro_batch, const LayerSplit& split);

}  // namespace dtrain::plan
