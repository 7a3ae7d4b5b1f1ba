// A decoder-only transformer as the planner sees it: its shape, what it
// counts in parameters, and what a step costs in floating-point operations.
// Formulas and sources: docs/planner.md ("Parameters", "FLOPs").
#pragma once

#include <cstdint>

namespace dtrain::plan {

struct Transformer {
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  // grouped-query attention; == heads for multi-head attention
  std::int64_t ffn = 0;       // the MLP's inner width
  std::int64_t vocab = 0;
  std::int64_t seq = 0;      // tokens per sequence
  std::int64_t experts = 1;  // 1: dense MLP; > 1: every layer's MLP is a mixture of experts
  std::int64_t top_k = 1;    // experts each token visits

  bool moe() const { return experts > 1; }
  std::int64_t head_dim() const { return hidden / heads; }
  // Width of the keys (and of the values): kv_heads * head_dim.
  std::int64_t kv_width() const { return kv_heads * head_dim(); }
};

// Throws DT_ERR_INVALID_ARGUMENT naming the first field that makes no model.
void check(const Transformer& t);

// Parameters of one layer's attention block (QKV and output projections with
// biases), of one MLP (two linear layers with biases), of the two layer
// norms, and of the router of a MoE layer.
std::int64_t attention_parameters(const Transformer& t);
std::int64_t mlp_parameters(const Transformer& t);
std::int64_t norm_parameters(const Transformer& t);
std::int64_t router_parameters(const Transformer& t);
// One layer without its experts' MLPs (attention, norms, router), and its
// experts' MLPs (the MLP itself when dense).
std::int64_t layer_dense_parameters(const Transformer& t);
std::int64_t layer_expert_parameters(const Transformer& t);
// The word and position embeddings, and the final layer norm.
std::int64_t embedding_parameters(const Transformer& t);
std::int64_t final_norm_parameters(const Transformer& t);
// Everything, with the output layer tied to the word embedding.
std::int64_t total_parameters(const Transformer& t);

// Forward FLOPs per token: one layer's GEMMs, one layer's attention core
// (scores and their product with the values, over all `seq` keys), and the
// output layer's logits. A backward costs twice its forward.
double layer_gemm_flops(const Transformer& t);
double attention_core_flops(const Transformer& t);
double logit_flops(const Transformer& t);

enum class Recompute { none = 0, selective = 1, full = 2 };

// FLOPs of a step of `sequences` sequences: what the model needs (forward
// and backward), and what the hardware runs with `recompute` (also the
// forward passes recomputed in backward: every layer for full, the
// attention core for selective).
double model_flops(const Transformer& t, double sequences);
double hardware_flops(const Transformer& t, double sequences, Recompute recompute);

}  // namespace dtrain::plan
