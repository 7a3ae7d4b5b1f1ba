#include "model.hpp"

#include <cmath>
#include <cstring>
#include <optional>

#include "kernels.hpp"
#include "tensor.hpp"
#include "text.hpp"

namespace gpt {

namespace {

constexpr unsigned kAcc = DT_TP_ACCUMULATE;

uint64_t name_hash(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Normal(0, stddev) numbers from a counter-based generator (Box-Muller).
void fill_normal(std::vector<float> &v, uint64_t key, float stddev) {
  for (size_t i = 0; i < v.size(); i += 2) {
    double u1 = ((double)(mix64(key + i) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = (double)(mix64(key + i + 1) >> 11) / 9007199254740992.0;
    double r = std::sqrt(-2.0 * std::log(u1)), a = 2.0 * M_PI * u2;
    v[i] = (float)(r * std::cos(a)) * stddev;
    if (i + 1 < v.size()) v[i + 1] = (float)(r * std::sin(a)) * stddev;
  }
}

int64_t product(const std::vector<int64_t> &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// A DLTensor over a parameter's values (or, `grad`, its gradient) in its own shape.
struct ParamView {
  ParamView(Param &p, bool grad)
      : view(grad ? p.g.data() : p.w.data(), p.local[0], p.local.size() > 1 ? p.local[1] : -1) {}
  View view;
  DLTensor *get() { return view.get(); }
};

}  // namespace

int64_t Saved::bytes() const {
  int64_t n = (int64_t)(ids.capacity() + targets.capacity()) * 4;
  for (const auto *v : {&xf, &hf, &muf, &rsf, &logits, &lse, &loss}) n += (int64_t)v->capacity() * 4;
  n += (int64_t)where.capacity() * 8;
  for (const Block &b : blocks)
    for (const auto *v : {&b.x, &b.h1, &b.mu1, &b.rs1, &b.qkv, &b.probs, &b.lse, &b.att, &b.x1, &b.h2, &b.mu2, &b.rs2, &b.f,
                          &b.gl})
      n += (int64_t)v->capacity() * 4;
  for (const Block &b : blocks) n += b.moe.bytes();
  return n;
}

Param *Stage::add(const std::string &name, std::vector<int64_t> full, Split split, float stddev, float fill) {
  Param p;
  p.name = name;
  p.full = full;
  p.split = split;
  p.local = full;
  if (split == Split::columns)
    p.local.back() /= tp_size_;
  else if (split == Split::experts)
    p.local[0] /= ep_.size;
  else if (split != Split::replicated)
    p.local[0] /= tp_size_;
  // Replicas count once: whole over tp on tp rank 0, dense over ep on ep rank 0.
  bool tp_whole = split == Split::replicated || split == Split::experts;
  p.counted = (!tp_whole || tp_rank_ == 0) && (split == Split::experts || ep_.rank == 0);
  std::vector<float> whole((size_t)product(full), fill);
  if (stddev > 0) fill_normal(whole, mix64(cfg_.seed) ^ name_hash(name), stddev);
  shard(p, whole, p.w, Group{tp_, tp_rank_, tp_size_}, ep_, (int)cfg_.heads);
  p.g.assign(p.w.size(), 0.0f);
  params_.push_back(std::move(p));
  return &params_.back();
}

Stage::Stage(const Config &cfg, int stage, int stages, Group tp, Group cp, Group ep)
    : cfg_(cfg),
      stage_(stage),
      stages_(stages),
      tp_(tp.comm),
      tp_rank_(tp.rank),
      tp_size_(tp.size),
      cp_(cp),
      ep_(ep) {
  const int64_t H = cfg.hidden, L = cfg.layers;
  const int64_t l0 = stage * L / stages, l1 = (stage + 1) * L / stages;
  params_.reserve((size_t)(12 * (l1 - l0) + 5));  // Layer and the members below point into it
  const float std0 = 0.02f, std_out = 0.02f / std::sqrt(2.0f * (float)L);  // GPT-2's scaled residual init
  if (first()) {
    tok_ = add("tok_emb", {cfg.vocab, H}, Split::rows, std0, 0);
    pos_ = add("pos_emb", {cfg.seq, H}, Split::replicated, std0, 0);
  }
  for (int64_t l = l0; l < l1; ++l) {
    std::string n = "h" + std::to_string(l) + ".";
    Layer y;
    y.ln1g = add(n + "ln1.g", {H}, Split::replicated, 0, 1);
    y.ln1b = add(n + "ln1.b", {H}, Split::replicated, 0, 0);
    y.qkvw = add(n + "qkv.w", {3 * H, H}, Split::qkv, std0, 0);
    y.qkvb = add(n + "qkv.b", {3 * H}, Split::qkv, 0, 0);
    y.projw = add(n + "proj.w", {H, H}, Split::columns, std_out, 0);
    y.projb = add(n + "proj.b", {H}, Split::replicated, 0, 0);
    y.ln2g = add(n + "ln2.g", {H}, Split::replicated, 0, 1);
    y.ln2b = add(n + "ln2.b", {H}, Split::replicated, 0, 0);
    if (cfg.moe.experts > 0 && l % 2 == 1) {
      // Experts of 2H hidden units: with top-2 routing a token costs what the dense 4H MLP does.
      const int64_t E = cfg.moe.experts, F = 2 * H;
      y.moe.router = add(n + "router.w", {E, H}, Split::replicated, std0, 0);
      y.moe.w1 = add(n + "experts.w1", {E, H, F}, Split::experts, std0, 0);
      y.moe.w2 = add(n + "experts.w2", {E, F, H}, Split::experts, std_out, 0);
    } else {
      y.fc1w = add(n + "fc1.w", {4 * H, H}, Split::rows, std0, 0);
      y.fc1b = add(n + "fc1.b", {4 * H}, Split::rows, 0, 0);
      y.fc2w = add(n + "fc2.w", {H, 4 * H}, Split::columns, std_out, 0);
      y.fc2b = add(n + "fc2.b", {H}, Split::replicated, 0, 0);
    }
    layers_.push_back(y);
  }
  if (last()) {
    lnfg_ = add("lnf.g", {H}, Split::replicated, 0, 1);
    lnfb_ = add("lnf.b", {H}, Split::replicated, 0, 0);
    head_ = add("head.w", {cfg.vocab, H}, Split::rows, std0, 0);
  }
}

namespace {

// The queries, keys or values (`part` 0, 1, 2) of one sequence's packed qkv
// rows as [len, heads, dim], the layout of libdtrain's attention calls; and back.
void unpack(const float *qkv, int part, int64_t len, int64_t width, float *out) {
  for (int64_t i = 0; i < len; ++i)
    std::memcpy(out + i * width, qkv + i * 3 * width + part * width, (size_t)width * sizeof(float));
}

void pack(const float *in, int part, int64_t len, int64_t width, float *qkv) {
  for (int64_t i = 0; i < len; ++i)
    std::memcpy(qkv + i * 3 * width + part * width, in + i * width, (size_t)width * sizeof(float));
}

}  // namespace

void Stage::attention_forward(Saved::Block &b, int64_t seqs, int64_t len) {
  const int64_t heads = cfg_.heads / tp_size_, dim = cfg_.hidden / cfg_.heads, width = heads * dim;
  b.att.resize((size_t)(seqs * len * width));
  if (cp_.size == 1) {
    b.probs.resize((size_t)(seqs * heads * len * len));
    gpt::attention_forward(b.qkv.data(), b.att.data(), b.probs.data(), seqs, len, heads, dim);
    return;
  }
  b.lse.resize((size_t)(seqs * len * heads));
  std::vector<float> qkv((size_t)(3 * len * width));
  for (int64_t s = 0; s < seqs; ++s) {
    for (int part = 0; part < 3; ++part)
      unpack(b.qkv.data() + s * len * 3 * width, part, len, width, qkv.data() + part * len * width);
    View q(qkv.data(), len, heads, dim), k(qkv.data() + len * width, len, heads, dim),
        v(qkv.data() + 2 * len * width, len, heads, dim), o(b.att.data() + s * len * width, len, heads, dim),
        lse(b.lse.data() + s * len * heads, len, heads);
    check(dt_cp_ring_attention_forward(cp_.comm, DT_CP_ZIGZAG, 1, 0.0, q.get(), k.get(), v.get(), o.get(), lse.get()),
          "ring attention forward");
  }
}

void Stage::attention_backward(Saved::Block &b, const float *datt, float *dqkv, int64_t seqs, int64_t len) {
  const int64_t heads = cfg_.heads / tp_size_, dim = cfg_.hidden / cfg_.heads, width = heads * dim;
  if (cp_.size == 1) {
    gpt::attention_backward(b.qkv.data(), b.probs.data(), datt, dqkv, seqs, len, heads, dim);
    return;
  }
  std::vector<float> qkv((size_t)(3 * len * width)), grads(qkv.size());
  for (int64_t s = 0; s < seqs; ++s) {
    for (int part = 0; part < 3; ++part)
      unpack(b.qkv.data() + s * len * 3 * width, part, len, width, qkv.data() + part * len * width);
    const int64_t at = s * len * width;
    View q(qkv.data(), len, heads, dim), k(qkv.data() + len * width, len, heads, dim),
        v(qkv.data() + 2 * len * width, len, heads, dim), o(b.att.data() + at, len, heads, dim),
        lse(b.lse.data() + s * len * heads, len, heads), d_o(datt + at, len, heads, dim),
        dq(grads.data(), len, heads, dim), dk(grads.data() + len * width, len, heads, dim),
        dv(grads.data() + 2 * len * width, len, heads, dim);
    check(dt_cp_ring_attention_backward(cp_.comm, DT_CP_ZIGZAG, 1, 0.0, q.get(), k.get(), v.get(), o.get(), lse.get(),
                                        d_o.get(), dq.get(), dk.get(), dv.get()),
          "ring attention backward");
    for (int part = 0; part < 3; ++part)
      pack(grads.data() + part * len * width, part, len, width, dqkv + s * len * 3 * width);
  }
}

void Stage::mlp_forward(const Layer &l, Saved::Block &b, float *out, int64_t rows) {
  const int64_t H = cfg_.hidden, Hl = H / tp_size_;
  if (l.moe.router) {
    moe_forward(cfg_.moe, ep_, l.moe, b.moe, b.h2.data(), out, rows, H);
    return;
  }
  b.f.resize((size_t)(rows * 4 * Hl));
  {
    View in(b.h2.data(), rows, H), y(b.f.data(), rows, 4 * Hl);
    ParamView w(*l.fc1w, false), bias(*l.fc1b, false);
    check(dt_tp_column_linear_forward(tp_, in.get(), w.get(), bias.get(), y.get(), 0), "fc1 forward");
  }
  b.gl.resize(b.f.size());
  gelu_forward(b.f.data(), b.gl.data(), rows * 4 * Hl);
  {
    View in(b.gl.data(), rows, 4 * Hl), y(out, rows, H);
    ParamView w(*l.fc2w, false), bias(*l.fc2b, false);
    check(dt_tp_row_linear_forward(tp_, in.get(), w.get(), bias.get(), y.get(), 0), "fc2 forward");
  }
}

// One dt_tp_*_linear_backward of `job`'s layer: dx when given, and the
// weight's (and bias's) gradient when `weights`.
void Stage::linear_pass(const WeightGrad &job, const float *dy, float *dx, bool weights) {
  View x(job.x, job.rows, job.in), dyv(dy, job.rows, job.out);
  ParamView w(*job.w, false);
  std::optional<View> dxv;
  std::optional<ParamView> dw, db;
  if (dx) dxv.emplace(dx, job.rows, job.in);
  if (weights) dw.emplace(*job.w, true);
  if (weights && job.b) db.emplace(*job.b, true);
  auto backward = job.row_parallel ? dt_tp_row_linear_backward : dt_tp_column_linear_backward;
  check(backward(tp_, x.get(), w.get(), dyv.get(), dxv ? dxv->get() : nullptr, dw ? dw->get() : nullptr,
                 db ? db->get() : nullptr, kAcc),
        job.what);
}

void Stage::linear_backward(Saved &s, WeightGrad job, const float *dy, float *dx) {
  linear_pass(job, dy, dx, !defer_weights_);
  if (!defer_weights_) return;
  job.dy.assign(dy, dy + job.rows * job.out);
  s.deferred.push_back(std::move(job));
}

void Stage::backward_weight(Saved &s) {
  for (const WeightGrad &job : s.deferred) linear_pass(job, job.dy.data(), nullptr, true);
  s.deferred.clear();
}

// dh [rows, H] (overwritten) from dy, the gradient of the MLP's output.
void Stage::mlp_backward(Saved &s, const Layer &l, Saved::Block &b, const float *dy, float *dh, int64_t rows) {
  const int64_t H = cfg_.hidden, Hl = H / tp_size_;
  std::vector<float> dgl((size_t)(rows * 4 * Hl));
  linear_backward(s, {true, "fc2 backward", l.fc2w, l.fc2b, b.gl.data(), rows, 4 * Hl, H, {}}, dy, dgl.data());
  gelu_backward(b.f.data(), dgl.data(), dgl.data(), rows * 4 * Hl);
  linear_backward(s, {false, "fc1 backward", l.fc1w, l.fc1b, b.h2.data(), rows, H, 4 * Hl, {}}, dgl.data(), dh);
}

void Stage::block_forward(const Layer &l, Saved::Block &b, const float *x, float *out, int64_t seqs, int64_t len) {
  const int64_t rows = seqs * len, H = cfg_.hidden, Hl = H / tp_size_;
  b.x.assign(x, x + rows * H);
  b.h1.resize((size_t)(rows * H));
  b.mu1.resize((size_t)rows);
  b.rs1.resize((size_t)rows);
  layernorm_forward(x, l.ln1g->w.data(), l.ln1b->w.data(), b.h1.data(), b.mu1.data(), b.rs1.data(), rows, H);
  b.qkv.resize((size_t)(rows * 3 * Hl));
  {
    View in(b.h1.data(), rows, H), y(b.qkv.data(), rows, 3 * Hl);
    ParamView w(*l.qkvw, false), bias(*l.qkvb, false);
    check(dt_tp_column_linear_forward(tp_, in.get(), w.get(), bias.get(), y.get(), 0), "qkv forward");
  }
  attention_forward(b, seqs, len);
  b.x1.resize((size_t)(rows * H));
  {
    View in(b.att.data(), rows, Hl), y(b.x1.data(), rows, H);
    ParamView w(*l.projw, false), bias(*l.projb, false);
    check(dt_tp_row_linear_forward(tp_, in.get(), w.get(), bias.get(), y.get(), 0), "proj forward");
  }
  add_into(b.x1.data(), x, rows * H);
  b.h2.resize((size_t)(rows * H));
  b.mu2.resize((size_t)rows);
  b.rs2.resize((size_t)rows);
  layernorm_forward(b.x1.data(), l.ln2g->w.data(), l.ln2b->w.data(), b.h2.data(), b.mu2.data(), b.rs2.data(), rows,
                    H);
  mlp_forward(l, b, out, rows);
  add_into(out, b.x1.data(), rows * H);
}

// `dx` holds the gradient of the block's output on entry and of its input on return.
void Stage::block_backward(Saved &s, const Layer &l, Saved::Block &b, float *dx, int64_t seqs, int64_t len,
                           float loss_weight) {
  const int64_t rows = seqs * len, H = cfg_.hidden, Hl = H / tp_size_;
  std::vector<float> dh((size_t)(rows * H));
  if (l.moe.router)
    moe_backward(cfg_.moe, l.moe, b.moe, b.h2.data(), dx, dh.data(), seqs, len, H, loss_weight);
  else
    mlp_backward(s, l, b, dx, dh.data(), rows);
  // dx is now the gradient of x1 through the residual; add the norm's branch.
  layernorm_backward(b.x1.data(), b.mu2.data(), b.rs2.data(), l.ln2g->w.data(), dh.data(), dx, l.ln2g->g.data(),
                     l.ln2b->g.data(), rows, H);
  std::vector<float> datt((size_t)(rows * Hl)), dqkv((size_t)(rows * 3 * Hl));
  linear_backward(s, {true, "proj backward", l.projw, l.projb, b.att.data(), rows, Hl, H, {}}, dx, datt.data());
  attention_backward(b, datt.data(), dqkv.data(), seqs, len);
  linear_backward(s, {false, "qkv backward", l.qkvw, l.qkvb, b.h1.data(), rows, H, 3 * Hl, {}}, dqkv.data(),
                  dh.data());
  layernorm_backward(b.x.data(), b.mu1.data(), b.rs1.data(), l.ln1g->w.data(), dh.data(), dx, l.ln1g->g.data(),
                     l.ln1b->g.data(), rows, H);
}

double Stage::forward(Saved &s, const float *input, float *output, int64_t seqs, int64_t len) {
  const int64_t rows = seqs * len, H = cfg_.hidden;
  std::vector<float> x((size_t)(rows * H)), y((size_t)(rows * H));
  if (first()) {
    View ids(s.ids.data(), rows), out(x.data(), rows, H);
    ParamView table(*tok_, false);
    check(dt_tp_embedding_forward(tp_, table.get(), ids.get(), out.get(), 0), "embedding forward");
    add_positions(x.data(), pos_->w.data(), s.where.data(), rows, len, H);
  } else {
    std::memcpy(x.data(), input, x.size() * sizeof(float));
  }
  s.blocks.resize(layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i) {
    block_forward(layers_[i], s.blocks[i], x.data(), y.data(), seqs, len);
    x.swap(y);
  }
  if (!last()) {
    std::memcpy(output, x.data(), x.size() * sizeof(float));
    return 0.0;
  }
  const int64_t Vl = cfg_.vocab / tp_size_;
  s.xf = std::move(x);
  s.hf.resize((size_t)(rows * H));
  s.muf.resize((size_t)rows);
  s.rsf.resize((size_t)rows);
  layernorm_forward(s.xf.data(), lnfg_->w.data(), lnfb_->w.data(), s.hf.data(), s.muf.data(), s.rsf.data(), rows, H);
  s.logits.resize((size_t)(rows * Vl));
  {
    View in(s.hf.data(), rows, H), out(s.logits.data(), rows, Vl);
    ParamView w(*head_, false);
    check(dt_tp_column_linear_forward(tp_, in.get(), w.get(), nullptr, out.get(), 0), "head forward");
  }
  s.loss.resize((size_t)rows);
  s.lse.resize((size_t)rows);
  {
    View logits(s.logits.data(), rows, Vl), targets(s.targets.data(), rows), loss(s.loss.data(), rows),
        lse(s.lse.data(), rows);
    check(dt_tp_cross_entropy_forward(tp_, logits.get(), targets.get(), loss.get(), lse.get(), 0.0f, -1),
          "cross-entropy forward");
  }
  double sum = 0.0;
  for (float v : s.loss) sum += v;
  return sum;
}

void Stage::backward(Saved &s, const float *grad_output, float *grad_input, int64_t seqs, int64_t len,
                     float loss_weight, bool defer_weights) {
  const int64_t rows = seqs * len, H = cfg_.hidden;
  defer_weights_ = defer_weights;
  s.deferred.clear();
  std::vector<float> dx((size_t)(rows * H), 0.0f);
  if (last()) {
    const int64_t Vl = cfg_.vocab / tp_size_;
    std::vector<float> dloss((size_t)rows, loss_weight), dlogits((size_t)(rows * Vl)), dh((size_t)(rows * H));
    {
      View logits(s.logits.data(), rows, Vl), targets(s.targets.data(), rows), lse(s.lse.data(), rows),
          dl(dloss.data(), rows), out(dlogits.data(), rows, Vl);
      check(dt_tp_cross_entropy_backward(tp_, logits.get(), targets.get(), lse.get(), dl.get(), out.get(), 0.0f, -1),
            "cross-entropy backward");
    }
    linear_backward(s, {false, "head backward", head_, nullptr, s.hf.data(), rows, H, Vl, {}}, dlogits.data(),
                    dh.data());
    layernorm_backward(s.xf.data(), s.muf.data(), s.rsf.data(), lnfg_->w.data(), dh.data(), dx.data(),
                       lnfg_->g.data(), lnfb_->g.data(), rows, H);
  } else {
    std::memcpy(dx.data(), grad_output, dx.size() * sizeof(float));
  }
  for (size_t i = layers_.size(); i-- > 0;)
    block_backward(s, layers_[i], s.blocks[i], dx.data(), seqs, len, loss_weight);
  if (!first()) {
    std::memcpy(grad_input, dx.data(), dx.size() * sizeof(float));
    return;
  }
  positions_backward(dx.data(), pos_->g.data(), s.where.data(), rows, len, H);
  View ids(s.ids.data(), rows), dout(dx.data(), rows, H);
  ParamView dtable(*tok_, true);
  check(dt_tp_embedding_backward(tp_, ids.get(), dout.get(), dtable.get(), kAcc), "embedding backward");
}

int64_t Stage::saved_bytes(int64_t seqs, int64_t len) const {
  const int64_t rows = seqs * len, H = cfg_.hidden, Hl = H / tp_size_, heads = cfg_.heads / tp_size_;
  // Per token: x, h1, x1, h2, two means and two reciprocal deviations, qkv, the attention output.
  const int64_t attention = cp_.size == 1 ? seqs * heads * len * len : rows * heads;  // probabilities or lse
  int64_t floats = 2 * rows + len * 2;  // ids, targets (int32) and positions (int64)
  for (const Layer &l : layers_) {
    floats += rows * (4 * H + 4 + 4 * Hl) + attention;
    if (l.moe.router) {
      const int64_t E = cfg_.moe.experts, k = cfg_.moe.top_k, received = rows * k, F = 2 * H;
      floats += rows * (E + k + 2 * k) + received * (2 * H + F);  // logits, weights, experts (int64)
    } else {
      floats += rows * 8 * Hl;  // f and its GELU
    }
  }
  if (last()) floats += rows * (2 * H + 4 + cfg_.vocab / tp_size_);  // xf, hf, stats, logits, lse, loss
  return 4 * floats;
}

int64_t Stage::param_count() const {
  const int64_t H = cfg_.hidden, V = cfg_.vocab, t = tp_size_;
  int64_t n = 0;
  if (first()) n += V / t * H + cfg_.seq * H;  // the token embedding's vocabulary shard, positions
  for (const Layer &l : layers_) {
    n += 4 * H + (3 * H * H + 3 * H) / t + H * H / t + H;  // two norms, qkv (columns), proj (rows) + its bias
    if (l.moe.router)
      n += cfg_.moe.experts * H + cfg_.moe.experts / ep_.size * 2 * (H * 2 * H);  // router, this rank's experts
    else
      n += (4 * H * H + 4 * H) / t + 4 * H * H / t + H;  // fc1 (columns), fc2 (rows) + its bias
  }
  if (last()) n += 2 * H + V / t * H;  // final norm, the head's vocabulary shard
  return n;
}

std::vector<float> Stage::full_logits(const Saved &s, int64_t row) {
  const int64_t Vl = cfg_.vocab / tp_size_;
  std::vector<float> all((size_t)cfg_.vocab);
  View mine(s.logits.data() + row * Vl, 1, Vl), out(all.data(), 1, cfg_.vocab);
  check(dt_tp_region_forward(tp_, DT_TP_GATHER, mine.get(), out.get()), "gathering logits");
  return all;
}

}  // namespace gpt
