#include "plan/activations.hpp"

namespace dtrain::plan {

double layer_activation_bytes(const Transformer& t, std::int64_t micro_batch, const LayerSplit& split,
                              Recompute recompute) {
  const double s = static_cast<double>(t.seq) / split.cp;
  const double b = static_cast<double>(micro_batch);
  const double h = static_cast<double>(t.hidden);
  const double tp = split.tp;
  const double sbh = s * b * h;
  // Replicated across tp unless sequence parallel: the two layer norms'
  // inputs (4sbh), the inputs of QKV and of the MLP (2sbh each) and the two
  // dropout masks after attention and MLP (sbh each).
  const double replicated = 10.0 * sbh;
  // Split over tp: Q (2sbh), K and V (2 s b kv_width each), the attention
  // output projection's input (2sbh), and the MLP's two 2 s b ffn inputs,
  // once per expert a token visits.
  const double split_part = 4.0 * sbh + 4.0 * s * b * static_cast<double>(t.kv_width()) +
                            4.0 * s * b * static_cast<double>(t.ffn) * static_cast<double>(t.top_k);
  // Softmax output (2 bytes), its dropout mask (1) and dropout output (2)
  // per score: 5 a s^2 b, unless blockwise (cp) or recomputed (selective).
  const bool scores_kept = split.cp == 1 && recompute == Recompute::none;
  const double scores = scores_kept ? 5.0 * static_cast<double>(t.heads) * s * s * b : 0.0;
  const double shared = split.sequence_parallel ? tp : 1.0;
  if (recompute == Recompute::full) return 2.0 * sbh / shared;
  return replicated / shared + (split_part + scores) / tp;
}

double logit_bytes(const Transformer& t, std::int64_t micro_batch, const LayerSplit& split) {
  return 4.0 * static_cast<double>(t.seq) / split.cp * static_cast<double>(micro_batch) * static_cast<double>(t.vocab) /
         split.tp;
}

}  // namespace dtrain::plan
