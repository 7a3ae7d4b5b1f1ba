// A GPT split for tensor and pipeline parallelism: the part of the model one
// rank holds for one pipeline stage (a "chunk": with interleaving a rank
// holds several). Pre-norm blocks: x + Attn(LN(x)), then x + MLP(LN(x)).
//
// Tensor parallelism (Megatron-LM): the token embedding and the output
// projection are split over the vocabulary, the query-key-value projection
// and the MLP's first layer over their output features (column-parallel: each
// rank runs its own heads), the attention's output projection and the MLP's
// second layer over their input features (row-parallel, one allreduce each).
// Layer norms, position embeddings and row-parallel biases are replicated:
// every tensor-parallel rank holds them whole and computes the same gradient.
//
// Expert parallelism: with --experts E every other block (the odd ones)
// replaces its MLP with a mixture of E experts (moe_layer.hpp), the experts
// split over the ep ranks, which also split the data as data parallelism
// does.
//
// Context parallelism: with cp > 1 each rank holds a zigzag shard of every
// sequence (DT_CP_ZIGZAG, so causal attention costs every rank the same) and
// attention runs as libdtrain's ring attention; everything else works token
// by token and needs no change. With cp = 1 attention is the example's own
// kernel.
//
// Initialisation makes the whole of each weight from the seed and the
// weight's name, then keeps this rank's shard (dt_tp_shard), so every mesh
// starts from the same model.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <string>
#include <vector>

#include "moe_layer.hpp"
#include "param.hpp"

namespace gpt {

struct Config {
  int64_t vocab = 0, seq = 64, hidden = 128, heads = 4, layers = 4;
  uint64_t seed = 1;
  MoeConfig moe;  // experts 0: every block dense
};

// A linear layer's weight gradient left for later by a zero-bubble
// schedule: dW (and db) from the layer's saved input and its output's
// gradient, which the input-gradient pass computed and keeps here.
struct WeightGrad {
  bool row_parallel;
  const char *what;
  Param *w, *b;     // b may be null
  const float *x;   // [rows, in], saved by forward
  int64_t rows, in, out;
  std::vector<float> dy;  // [rows, out]
};

// One forward's saved activations: what the backward reads.
struct Saved {
  struct Block {
    std::vector<float> x, h1, mu1, rs1, qkv, probs, lse, att, x1, h2, mu2, rs2, f, gl;
    MoeSaved moe;
  };
  std::vector<int32_t> ids, targets;
  std::vector<int64_t> where;  // the positions of a sequence's rows on this rank
  std::vector<Block> blocks;
  std::vector<float> xf, hf, muf, rsf, logits, lse, loss;
  std::vector<WeightGrad> deferred;  // ZB-H1: from backward() to backward_weight()
  int64_t bytes() const;
};

class Stage {
 public:
  // Global stage `stage` of `stages`: layers [stage L / stages, (stage + 1) L / stages),
  // the embeddings on the first, the final norm, head and loss on the last.
  Stage(const Config &cfg, int stage, int stages, Group tp, Group cp, Group ep);
  bool first() const { return stage_ == 0; }
  bool last() const { return stage_ == stages_ - 1; }
  std::vector<Param> &params() { return params_; }

  // `seqs` sequences of which this rank holds `len` tokens each (rows = seqs *
  // len), at positions s.where. The first stage reads s.ids, the others
  // `input` [rows, hidden]; the last reads s.targets and returns the summed
  // loss of the rows, the others write `output`.
  double forward(Saved &s, const float *input, float *output, int64_t seqs, int64_t len);
  // The loss differentiated is `loss_weight` times the summed loss. Adds the
  // weight gradients into the parameters' `g`; writes `grad_input` (not on the
  // first stage) from `grad_output` (not on the last). With `defer_weights`
  // (ZB-H1's BACKWARD_INPUT) the linear layers' weight gradients are left in
  // s.deferred for backward_weight(); norms and embeddings still add theirs.
  void backward(Saved &s, const float *grad_output, float *grad_input, int64_t seqs, int64_t len,
                float loss_weight, bool defer_weights);
  // ZB-H1's BACKWARD_WEIGHT: the linear layers' weight gradients left by
  // backward(), added into the parameters' `g`. No communication.
  void backward_weight(Saved &s);
  // What forward() keeps for the backward of one micro-batch, in bytes, by
  // formula (a block with experts counted as if each token's k choices were
  // received evenly over the ep ranks).
  int64_t saved_bytes(int64_t seqs, int64_t len) const;
  // The parameters this rank holds for the stage, by formula from the
  // configuration (not from the tensors made), to check them against.
  int64_t param_count() const;
  // The last stage after a forward: row `row`'s logits over the whole
  // vocabulary (gathered over tensor parallelism).
  std::vector<float> full_logits(const Saved &s, int64_t row);

 private:
  struct Layer {
    Param *ln1g, *ln1b, *qkvw, *qkvb, *projw, *projb, *ln2g, *ln2b;
    Param *fc1w = nullptr, *fc1b = nullptr, *fc2w = nullptr, *fc2b = nullptr;  // dense blocks
    MoeParams moe{};                                                           // MoE blocks
  };
  Param *add(const std::string &name, std::vector<int64_t> full, Split split, float stddev, float fill);
  void block_forward(const Layer &l, Saved::Block &b, const float *x, float *out, int64_t seqs, int64_t len);
  void block_backward(Saved &s, const Layer &l, Saved::Block &b, float *dx, int64_t seqs, int64_t len,
                      float loss_weight);
  void mlp_forward(const Layer &l, Saved::Block &b, float *out, int64_t rows);
  void mlp_backward(Saved &s, const Layer &l, Saved::Block &b, const float *dy, float *dh, int64_t rows);
  // dx [rows, in] of a tensor-parallel linear layer from dy [rows, out], and
  // its weight gradient now or, while defer_weights_, into s.deferred.
  void linear_backward(Saved &s, WeightGrad job, const float *dy, float *dx);
  void linear_pass(const WeightGrad &job, const float *dy, float *dx, bool weights);
  void attention_forward(Saved::Block &b, int64_t seqs, int64_t len);
  void attention_backward(Saved::Block &b, const float *datt, float *dqkv, int64_t seqs, int64_t len);

  Config cfg_;
  int stage_, stages_;
  dt_comm *tp_;
  int tp_rank_, tp_size_;
  Group cp_, ep_;
  std::vector<Param> params_;
  std::vector<Layer> layers_;
  bool defer_weights_ = false;  // during a ZB-H1 BACKWARD_INPUT
  Param *tok_ = nullptr, *pos_ = nullptr, *lnfg_ = nullptr, *lnfb_ = nullptr, *head_ = nullptr;
};

}  // namespace gpt
