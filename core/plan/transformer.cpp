#include "plan/transformer.hpp"

#include <string>

#include "base/error.hpp"

namespace dtrain::plan {

namespace {

void positive(std::int64_t value, const char* name) {
  if (value < 1)
    raise(DT_ERR_INVALID_ARGUMENT, std::string("model.") + name + " is " + std::to_string(value) + "; it must be >= 1");
}

}  // namespace

void check(const Transformer& t) {
  positive(t.layers, "layers");
  positive(t.hidden, "hidden");
  positive(t.heads, "heads");
  positive(t.kv_heads, "kv_heads");
  positive(t.ffn, "ffn_hidden");
  positive(t.vocab, "vocab");
  positive(t.seq, "seq_len");
  positive(t.experts, "experts");
  positive(t.top_k, "top_k");
  if (t.hidden % t.heads != 0) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "model.hidden " + std::to_string(t.hidden) + " is not divisible by model.heads " + std::to_string(t.heads));
  }
  if (t.heads % t.kv_heads != 0) {
    raise(DT_ERR_INVALID_ARGUMENT, "model.heads " + std::to_string(t.heads) + " is not divisible by model.kv_heads " +
                                       std::to_string(t.kv_heads));
  }
  if (t.top_k > t.experts) {
    raise(DT_ERR_INVALID_ARGUMENT,
          "model.top_k " + std::to_string(t.top_k) + " exceeds model.experts " + std::to_string(t.experts));
  }
}

std::int64_t attention_parameters(const Transformer& t) {
  const std::int64_t qkv_out = t.hidden + 2 * t.kv_width();
  return t.hidden * qkv_out + qkv_out + t.hidden * t.hidden + t.hidden;
}

std::int64_t mlp_parameters(const Transformer& t) { return 2 * t.hidden * t.ffn + t.ffn + t.hidden; }

std::int64_t norm_parameters(const Transformer& t) { return 4 * t.hidden; }

std::int64_t router_parameters(const Transformer& t) { return t.moe() ? t.hidden * t.experts : 0; }

std::int64_t layer_dense_parameters(const Transformer& t) {
  return attention_parameters(t) + norm_parameters(t) + router_parameters(t);
}

std::int64_t layer_expert_parameters(const Transformer& t) { return t.experts * mlp_parameters(t); }

std::int64_t embedding_parameters(const Transformer& t) { return (t.vocab + t.seq) * t.hidden; }

std::int64_t final_norm_parameters(const Transformer& t) { return 2 * t.hidden; }

std::int64_t total_parameters(const Transformer& t) {
  return t.layers * (layer_dense_parameters(t) + layer_expert_parameters(t)) + embedding_parameters(t) +
         final_norm_parameters(t);
}

double layer_gemm_flops(const Transformer& t) {
  const double h = static_cast<double>(t.hidden);
  const double qkv = h * static_cast<double>(t.hidden + 2 * t.kv_width());
  const double mlp = 2.0 * h * static_cast<double>(t.ffn) * static_cast<double>(t.top_k);
  const double router = h * static_cast<double>(router_parameters(t) / t.hidden);
  // 2 FLOPs (a multiply and an add) per weight per token.
  return 2.0 * (qkv + h * h + mlp + router);
}

double attention_core_flops(const Transformer& t) {
  // Q K^T and softmax(.) V: 2 * seq * hidden each per token.
  return 4.0 * static_cast<double>(t.seq) * static_cast<double>(t.hidden);
}

double logit_flops(const Transformer& t) { return 2.0 * static_cast<double>(t.hidden) * static_cast<double>(t.vocab); }

double model_flops(const Transformer& t, double sequences) {
  const double tokens = sequences * static_cast<double>(t.seq);
  const double forward =
      static_cast<double>(t.layers) * (layer_gemm_flops(t) + attention_core_flops(t)) + logit_flops(t);
  return 3.0 * tokens * forward;
}

double hardware_flops(const Transformer& t, double sequences, Recompute recompute) {
  const double tokens = sequences * static_cast<double>(t.seq);
  const double layers = static_cast<double>(t.layers);
  double again = 0.0;
  if (recompute == Recompute::full) again = layers * (layer_gemm_flops(t) + attention_core_flops(t));
  if (recompute == Recompute::selective) again = layers * attention_core_flops(t);
  return model_flops(t, sequences) + tokens * again;
}

}  // namespace dtrain::plan
