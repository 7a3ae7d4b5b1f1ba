#include "trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "kernels.hpp"
#include "tensor.hpp"

namespace gpt {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

float *data_of(const DLTensor *t) { return t ? (float *)((char *)t->data + t->byte_offset) : nullptr; }

// The executor calls these; an exception must not cross into C.
dt_status on_forward(void *user, int chunk, int mb, const DLTensor *input, DLTensor *output) {
  try {
    static_cast<Trainer *>(user)->forward(chunk, mb, data_of(input), data_of(output));
    return DT_OK;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "forward: %s\n", e.what());
    return DT_ERR_INTERNAL;
  }
}

dt_status on_backward(void *user, int chunk, int mb, const DLTensor *grad_output, DLTensor *grad_input) {
  try {
    static_cast<Trainer *>(user)->backward(chunk, mb, data_of(grad_output), data_of(grad_input));
    return DT_OK;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "backward: %s\n", e.what());
    return DT_ERR_INTERNAL;
  }
}

dt_status on_backward_weight(void *user, int chunk, int mb) {
  try {
    static_cast<Trainer *>(user)->backward_weight(chunk, mb);
    return DT_OK;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "backward_weight: %s\n", e.what());
    return DT_ERR_INTERNAL;
  }
}

}  // namespace

Trainer::Trainer(const Options &o, const Corpus &corpus, dt_comm *world) : o_(o), corpus_(corpus), world_(world) {
  cfg_.vocab = corpus.vocab;
  cfg_.seq = o.seq;
  cfg_.hidden = o.hidden;
  cfg_.heads = o.heads;
  cfg_.layers = o.layers;
  cfg_.seed = o.seed;
  cfg_.moe.experts = o.experts;
  cfg_.moe.top_k = o.top_k;
  cfg_.moe.balance = o.moe_balance;
  data_ranks_ = o.dp * o.ep;
  mb_seqs_ = o.batch / ((int64_t)data_ranks_ * o.microbatches);

  const int sizes[5] = {o.tp, o.cp, o.ep, o.dp, o.pp};
  check(dt_mesh_create(&mesh_, world, 5, nullptr, sizes), "dt_mesh_create");
  check(dt_mesh_comm(mesh_, "tp", &tp_), "dt_mesh_comm(tp)");
  check(dt_mesh_comm(mesh_, "cp", &cp_), "dt_mesh_comm(cp)");
  check(dt_mesh_comm(mesh_, "pp", &pp_), "dt_mesh_comm(pp)");
  check(dt_mesh_comm(mesh_, "ep", &ep_), "dt_mesh_comm(ep)");
  check(dt_mesh_comm(mesh_, DT_MOE_DENSE_GRAD_DIMS, &replicas_), "dt_mesh_comm(dp,cp,ep)");
  check(dt_mesh_comm(mesh_, DT_MOE_EXPERT_GRAD_DIMS, &expert_replicas_), "dt_mesh_comm(dp,cp)");
  check(dt_mesh_comm(mesh_, "tp,pp,ep", &model_), "dt_mesh_comm(tp,pp,ep)");
  check(dt_mesh_comm(mesh_, "cp,pp", &cp_pp_), "dt_mesh_comm(cp,pp)");
  check(dt_mesh_coord(mesh_, "tp", &tp_rank_), "dt_mesh_coord");
  check(dt_mesh_coord(mesh_, "cp", &cp_rank_), "dt_mesh_coord");
  check(dt_mesh_coord(mesh_, "pp", &pp_rank_), "dt_mesh_coord");
  check(dt_mesh_coord(mesh_, "dp", &dp_rank_), "dt_mesh_coord");
  check(dt_mesh_coord(mesh_, "ep", &ep_rank_), "dt_mesh_coord");
  data_rank_ = ep_rank_ + o.ep * dp_rank_;
  len_ = o.seq / o.cp;
  where_.resize((size_t)len_);
  {
    View w(where_.data(), len_);
    check(dt_cp_positions(o.cp > 1 ? DT_CP_ZIGZAG : DT_CP_CONTIGUOUS, o.cp, cp_rank_, w.get()), "dt_cp_positions");
  }

  const int stages = o.pp * o.chunks;
  for (int c = 0; c < o.chunks; ++c) {
    Chunk ch;
    ch.stage = std::make_unique<Stage>(cfg_, c * o.pp + pp_rank_, stages, Group{tp_, tp_rank_, o.tp},
                                       Group{cp_, cp_rank_, o.cp}, Group{ep_, ep_rank_, o.ep});
    ch.saved.resize((size_t)o.microbatches);
    ch.live_bytes.assign((size_t)o.microbatches, 0);
    chunks_.push_back(std::move(ch));
  }
  for (Chunk &ch : chunks_)
    for (Param &p : ch.stage->params()) {
      params_.push_back(&p);
      (p.split == Split::experts ? experts_ : dense_).push_back(&p);
    }

  adam_.weight_decay = o.weight_decay;
  if (o.zero >= 0) {
    zero_create();
  } else {
    ddp_ = make_ddp(dense_, replicas_, o.dp * o.cp * o.ep);
    ddp_experts_ = make_ddp(experts_, expert_replicas_, o.dp * o.cp);
  }

  dt_pipeline_schedule_options so = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  so.kind = o.kind;
  so.stages = o.pp;
  so.microbatches = o.microbatches;
  so.chunks = o.chunks;
  dt_pipeline_schedule *schedule = nullptr;
  check(dt_pipeline_schedule_create(&schedule, &so), "dt_pipeline_schedule_create");
  check(dt_pipeline_schedule_peak_in_flight(schedule, pp_rank_, &peak_in_flight_), "dt_pipeline_schedule_peak_in_flight");
  dt_pipeline_options po = DT_PIPELINE_OPTIONS_INIT;
  po.activation_elements = mb_seqs_ * len_ * o.hidden;
  po.forward = on_forward;
  po.backward = on_backward;
  if (o.kind == DT_PIPELINE_ZB_H1) po.backward_weight = on_backward_weight;
  po.user = this;
  dt_status s = dt_pipeline_create(&pipe_, pp_, schedule, &po);
  dt_pipeline_schedule_destroy(schedule);
  check(s, "dt_pipeline_create");
}

// A DDP over `params`' gradients, or none where there is nothing to average.
dt_ddp *Trainer::make_ddp(const std::vector<Param *> &params, dt_comm *comm, int ranks) {
  if (ranks == 1 || params.empty()) return nullptr;
  std::vector<std::unique_ptr<View>> views;
  std::vector<const DLTensor *> grads;
  for (Param *p : params) {
    views.push_back(std::make_unique<View>(p->g.data(), (int64_t)p->g.size()));
    grads.push_back(views.back()->get());
  }
  dt_ddp *ddp = nullptr;
  check(dt_ddp_create(&ddp, comm, grads.data(), grads.size(), nullptr), "dt_ddp_create");
  return ddp;
}

// ZeRO over dp x cp: one unit per parameter, AdamW as the example's own
// (the same formulas) with the clipping inside. The norm is the whole
// model's: with tp or pp, the dt_zero also sums it over the tp x pp ranks,
// leaving out the tensor-parallel replicas counted on tp rank 0.
void Trainer::zero_create() {
  std::vector<std::unique_ptr<View>> views;
  std::vector<const DLTensor *> params;
  for (Param *p : params_) {
    views.push_back(std::make_unique<View>(p->w.data(), (int64_t)p->w.size()));
    params.push_back(views.back()->get());
  }
  dt_optimizer_options oo = DT_OPTIMIZER_OPTIONS_INIT;
  oo.kind = DT_OPTIM_ADAMW;
  oo.lr = o_.lr;
  oo.beta1 = adam_.beta1;
  oo.beta2 = adam_.beta2;
  oo.eps = adam_.eps;
  oo.weight_decay = o_.weight_decay;
  oo.max_grad_norm = o_.clip;
  std::vector<size_t> units(params.size(), 1), replicas;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!params_[i]->counted) replicas.push_back(i);
  dt_zero_options zo = DT_ZERO_OPTIONS_INIT;
  zo.stage = o_.zero;
  zo.unit_sizes = units.data();
  zo.unit_count = units.size();
  if (o_.tp * o_.pp > 1) {
    oo.comm = model_;
    zo.norm_excluded = replicas.data();
    zo.norm_excluded_count = replicas.size();
  }
  check(dt_zero_create(&zero_, replicas_, params.data(), params.size(), &oo, &zo), "dt_zero_create");
}

// Hands the step's gradients to the dt_zero (each unit made whole around
// its use, as stage 3 requires), steps, and copies the updated parameters
// back into the model's own tensors, which forward reads.
double Trainer::zero_step(float lr) {
  for (size_t i = params_.size(); i-- > 0;) {
    check(dt_zero_gather_wait(zero_, i, -1), "dt_zero_gather_wait");
    DLTensor g;
    check(dt_zero_gradient(zero_, i, &g), "dt_zero_gradient");
    add_into(static_cast<float *>(g.data), params_[i]->g.data(), (int64_t)params_[i]->g.size());
    check(dt_zero_mark_ready(zero_, i), "dt_zero_mark_ready");
    check(dt_zero_release(zero_, i), "dt_zero_release");
  }
  check(dt_zero_wait(zero_, -1), "dt_zero_wait");
  check(dt_zero_set_lr(zero_, lr), "dt_zero_set_lr");
  dt_optimizer_step_info info = DT_OPTIMIZER_STEP_INFO_INIT;
  check(dt_zero_step(zero_, &info), "dt_zero_step");
  for (size_t i = 0; i < params_.size(); ++i) {
    check(dt_zero_gather_wait(zero_, i, -1), "dt_zero_gather_wait");
    DLTensor w;
    check(dt_zero_parameter(zero_, i, &w), "dt_zero_parameter");
    std::memcpy(params_[i]->w.data(), w.data, params_[i]->w.size() * sizeof(float));
    check(dt_zero_release(zero_, i), "dt_zero_release");
  }
  return info.grad_norm;
}

Trainer::~Trainer() {
  dt_zero_destroy(zero_);
  dt_pipeline_destroy(pipe_);
  dt_ddp_destroy(ddp_);
  dt_ddp_destroy(ddp_experts_);
  for (dt_comm *c : {tp_, cp_, ep_, pp_, replicas_, expert_replicas_, model_, cp_pp_}) dt_comm_destroy(c);
  dt_mesh_destroy(mesh_);
}

// This rank's tokens of the windows of `text` starting at `starts`: the
// inputs at its positions and, as targets, the characters that follow them.
void Trainer::fill_windows(Saved &s, const std::vector<int32_t> &text, const std::vector<int64_t> &starts) {
  s.where = where_;
  s.ids.resize(starts.size() * (size_t)len_);
  s.targets.resize(s.ids.size());
  for (size_t i = 0; i < starts.size(); ++i)
    for (int64_t j = 0; j < len_; ++j) {
      size_t at = (size_t)(starts[i] + where_[(size_t)j]);
      s.ids[i * (size_t)len_ + (size_t)j] = text[at];
      s.targets[i * (size_t)len_ + (size_t)j] = text[at + 1];
    }
}

bool Trainer::loss_holder() const { return chunks_.back().stage->last() && tp_rank_ == 0; }

void Trainer::forward(int chunk, int mb, const float *input, float *output) {
  Chunk &ch = chunks_[(size_t)chunk];
  Saved &s = ch.saved[(size_t)mb];
  // Micro-batch mb of data rank d (of dp x ep): the step's global windows
  // d B/(dp ep) + mb s ... + s - 1, s per micro-batch.
  std::vector<int64_t> starts((size_t)mb_seqs_);
  for (int64_t i = 0; i < mb_seqs_; ++i)
    starts[(size_t)i] = window_start(o_.seed, step_, data_rank_ * (o_.batch / data_ranks_) + mb * mb_seqs_ + i,
                                     (int64_t)corpus_.train.size(), o_.seq);
  fill_windows(s, corpus_.train, starts);
  loss_sum_ += ch.stage->forward(s, input, output, mb_seqs_, len_);
  ch.live_bytes[(size_t)mb] = s.bytes();
  live_ += (double)s.bytes();
  peak_live_ = std::max(peak_live_, live_);
}

void Trainer::backward(int chunk, int mb, const float *grad_output, float *grad_input) {
  Chunk &ch = chunks_[(size_t)chunk];
  // Each rank's loss is the mean over its own tokens; DDP averages the ranks.
  float weight = 1.0f / (float)(o_.microbatches * mb_seqs_ * len_);
  // Under ZB-H1 every backward is a BACKWARD_INPUT: the linear layers'
  // weight gradients wait for the micro-batch's BACKWARD_WEIGHT.
  ch.stage->backward(ch.saved[(size_t)mb], grad_output, grad_input, mb_seqs_, len_, weight,
                     o_.kind == DT_PIPELINE_ZB_H1);
  live_ -= (double)ch.live_bytes[(size_t)mb];
}

void Trainer::backward_weight(int chunk, int mb) {
  Chunk &ch = chunks_[(size_t)chunk];
  ch.stage->backward_weight(ch.saved[(size_t)mb]);
}

double Trainer::sum_over(dt_comm *c, double v) {
  int64_t shape = 1;
  DLTensor t{&v, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, &shape, nullptr, 0};
  check(dt_allreduce(c, &t, &t, DT_SUM, nullptr, nullptr), "dt_allreduce");
  return v;
}

float Trainer::learning_rate(int step) const {
  if (step < o_.warmup) return o_.lr * (float)(step + 1) / (float)o_.warmup;
  double span = std::max(1, o_.steps - o_.warmup - 1);
  double progress = std::min(1.0, (double)(step - o_.warmup) / span);
  double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
  return (float)(o_.lr * (o_.min_lr_ratio + (1.0 - o_.min_lr_ratio) * cosine));
}

StepReport Trainer::step(int step) {
  StepReport r;
  double t0 = now();
  step_ = step;
  loss_sum_ = 0;
  for (Param *p : params_) std::fill(p->g.begin(), p->g.end(), 0.0f);
  dt_pipeline_step_info info = DT_PIPELINE_STEP_INFO_INIT;
  check(dt_pipeline_step(pipe_, &info), "dt_pipeline_step");
  double t1 = now(), t2;
  r.lr = learning_rate(step);
  if (zero_) {
    r.grad_norm = zero_step((float)r.lr);
    t2 = now();
  } else {
    for (auto [ddp, n] : {std::pair{ddp_, dense_.size()}, std::pair{ddp_experts_, experts_.size()}}) {
      if (!ddp) continue;
      for (size_t i = n; i-- > 0;) check(dt_ddp_mark_ready(ddp, i), "dt_ddp_mark_ready");
      check(dt_ddp_wait(ddp, -1), "dt_ddp_wait");
    }
    // An expert's gradient summed every ep rank's tokens, each rank's loss
    // being the mean over its own: the mean over all of them is 1/ep of it.
    for (Param *p : experts_)
      for (float &v : p->g) v /= (float)o_.ep;
    // The global gradient norm: shards add up over tp x pp, replicas count once.
    double sq = 0;
    for (Param *p : params_)
      if (p->counted)
        for (float v : p->g) sq += (double)v * v;
    sq = sum_over(model_, sq);
    r.grad_norm = std::sqrt(sq);
    if (o_.clip > 0 && r.grad_norm > o_.clip) {
      float scale = (float)(o_.clip / (r.grad_norm + 1e-6));
      for (Param *p : params_)
        for (float &v : p->g) v *= scale;
    }
    t2 = now();
    adam_.step(params_, (float)r.lr);
  }
  // The last stages hold the loss; each tensor-parallel replica counts once.
  double t3 = now();
  double mean = loss_holder() ? loss_sum_ / (double)(o_.microbatches * mb_seqs_ * len_) : 0.0;
  r.loss = sum_over(world_, mean) / (data_ranks_ * o_.cp);
  double t4 = now();
  r.seconds = t4 - t0;
  r.comm_seconds = info.comm_wait_seconds + (t2 - t1) + (t4 - t3);
  return r;
}

// Runs the global stages in order, forward only: each rank runs its chunks
// as their turn comes, receiving its input from the rank before and sending
// its output to the rank after. Returns the summed loss on the last stage.
double Trainer::forward_only(std::vector<Saved> &per_chunk, int64_t seqs) {
  const int stages = o_.pp * o_.chunks;
  const int64_t n = seqs * len_ * o_.hidden;
  std::vector<float> in((size_t)n), out((size_t)n);
  int64_t shape = n;
  double loss = 0;
  for (int g = 0; g < stages; ++g) {
    if (g % o_.pp != pp_rank_) continue;
    Chunk &ch = chunks_[(size_t)(g / o_.pp)];
    int prev = (g - 1) % o_.pp, next = (g + 1) % o_.pp;
    if (g > 0 && prev != pp_rank_) {
      DLTensor t{in.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 0};
      check(dt_recv(pp_, &t, prev, g, nullptr, nullptr), "dt_recv");
    }
    Saved &s = per_chunk[(size_t)(g / o_.pp)];
    loss += ch.stage->forward(s, in.data(), out.data(), seqs, len_);
    if (g + 1 < stages && next != pp_rank_) {
      DLTensor t{out.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 0};
      check(dt_send(pp_, &t, next, g + 1, nullptr, nullptr), "dt_send");
    }
    in.swap(out);
  }
  return loss;
}

double Trainer::validation_loss() {
  const int64_t T = o_.seq, local = o_.eval_seqs / data_ranks_;
  const int64_t span = (int64_t)corpus_.val.size() - T - 1;
  std::vector<int64_t> starts((size_t)local);
  for (int64_t i = 0; i < local; ++i)  // evenly spread over the held-out text
    starts[(size_t)i] = (data_rank_ * local + i) * span / o_.eval_seqs;
  std::vector<Saved> saved(chunks_.size());
  for (Saved &s : saved) fill_windows(s, corpus_.val, starts);
  double loss = forward_only(saved, local);
  return sum_over(world_, loss_holder() ? loss / (double)(local * len_) : 0.0) / (data_ranks_ * o_.cp);
}

// Generates one character at a time from the last `seq` characters (at
// first newlines), sampling at temperature 0.8 with the seed. The rank of
// the last stage that holds the last position draws; the others of its
// cp x pp group hear the draw from it.
std::string Trainer::sample(int chars) {
  const double temperature = 0.8;
  const int64_t real = (int64_t)corpus_.bytes.size(), T = o_.seq;
  auto newline = std::find(corpus_.bytes.begin(), corpus_.bytes.end(), '\n');
  int32_t nl = (int32_t)(newline == corpus_.bytes.end() ? 0 : newline - corpus_.bytes.begin());
  std::vector<int32_t> context((size_t)T, nl);
  const int64_t row = std::find(where_.begin(), where_.end(), T - 1) - where_.begin();  // == len_: not here
  int holder_cp = 0;
  for (int r = 0; r < o_.cp; ++r) {  // zigzag: the last chunk is rank 0's, but ask the layout
    std::vector<int64_t> w((size_t)len_);
    View v(w.data(), len_);
    check(dt_cp_positions(o_.cp > 1 ? DT_CP_ZIGZAG : DT_CP_CONTIGUOUS, o_.cp, r, v.get()), "dt_cp_positions");
    if (std::find(w.begin(), w.end(), T - 1) != w.end()) holder_cp = r;
  }
  std::string text;
  std::vector<Saved> saved(chunks_.size());
  for (int n = 0; n < chars; ++n) {
    std::vector<int32_t> window(context.end() - T, context.end());
    window.push_back(nl);  // a target for the last position, never used
    for (Saved &s : saved) fill_windows(s, window, {0});
    forward_only(saved, 1);
    int32_t token = 0;
    Stage &lastc = *chunks_.back().stage;
    if (lastc.last() && cp_rank_ == holder_cp) {
      std::vector<float> logits = lastc.full_logits(saved.back(), row);
      double mx = *std::max_element(logits.begin(), logits.begin() + real), total = 0;
      std::vector<double> p((size_t)real);
      for (int64_t v = 0; v < real; ++v) total += p[(size_t)v] = std::exp((logits[(size_t)v] - mx) / temperature);
      double u = (double)(mix64(o_.seed * 7919 + (uint64_t)n) >> 11) / 9007199254740992.0 * total;
      while (token < real - 1 && u >= p[(size_t)token]) u -= p[(size_t)token++];
    }
    int64_t one = 1;
    DLTensor t{&token, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &one, nullptr, 0};
    check(dt_broadcast(cp_pp_, &t, holder_cp + o_.cp * (o_.pp - 1), nullptr, nullptr), "dt_broadcast");
    context.push_back(token);
    text.push_back((char)corpus_.bytes[(size_t)token]);
  }
  return text;
}

Memory Trainer::memory() const {
  Memory m;
  for (const Param *p : params_) {
    m.params += 4.0 * (double)p->w.capacity();
    m.grads += 4.0 * (double)p->g.capacity();
    m.optimizer += 4.0 * (double)(p->m.capacity() + p->v.capacity());  // AdamW's two moments, f32, in the Params
  }
  if (!zero_)
    for (const Chunk &ch : chunks_) m.state_formula += 16.0 * (double)ch.stage->param_count();
  m.activations = peak_live_;
  double per_mb = 0;  // the chunks' mean: a pair in flight belongs to any of them
  for (const Chunk &ch : chunks_) per_mb += (double)ch.stage->saved_bytes(mb_seqs_, len_) / (double)chunks_.size();
  m.activations_formula = peak_in_flight_ * per_mb;
  if (zero_) {  // the dt_zero's own, besides the model's whole parameters and gradients above
    dt_zero_memory z = DT_ZERO_MEMORY_INIT;
    check(dt_zero_memory_usage(zero_, &z), "dt_zero_memory_usage");
    m.params += (double)(z.parameters + z.master_weights);
    m.grads += (double)z.gradients;
    m.optimizer = (double)z.optimizer_state;
    m.ddp = (double)z.communication;
  }
  // The buckets hold one copy of the gradients they average.
  for (const auto &[ddp, ps] : {std::pair{ddp_, &dense_}, std::pair{ddp_experts_, &experts_}})
    if (ddp)
      for (const Param *p : *ps) m.ddp += 4.0 * (double)p->g.size();
  return m;
}

}  // namespace gpt

namespace gpt {

CheckpointContext Trainer::checkpoint_context() {
  int world_rank = 0;
  check(dt_comm_rank(world_, &world_rank), "dt_comm_rank");
  bool writer = tp_rank_ == 0 && ep_rank_ == 0 && dp_rank_ == 0 && cp_rank_ == 0;
  return CheckpointContext{&cfg_, params_, Group{tp_, tp_rank_, o_.tp}, Group{ep_, ep_rank_, o_.ep}, writer, world_,
                           world_rank};
}

void Trainer::save(const std::string &dir, int steps) { save_checkpoint(checkpoint_context(), dir, steps, adam_.steps); }

int Trainer::load(const std::string &dir) {
  int64_t steps = 0, adam_steps = 0;
  std::string why = load_checkpoint(checkpoint_context(), dir, steps, adam_steps);
  if (!why.empty()) throw std::runtime_error("checkpoint refused: " + why);
  adam_.steps = adam_steps;
  return (int)steps;
}

}  // namespace gpt
