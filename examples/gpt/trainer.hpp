// One rank of the GPT's training: its pipeline chunks, the pipeline
// executor that runs them, DDP over the data-parallel ranks, AdamW with
// global-norm clipping and a warm-up + cosine learning rate, validation,
// sampling, and checkpoints that any other mesh can resume. Every rank makes the same calls in the same order.
#pragma once

#include <dtrain.h>

#include <memory>
#include <string>
#include <vector>

#include "adamw.hpp"
#include "checkpoint.hpp"
#include "model.hpp"
#include "options.hpp"
#include "text.hpp"

namespace gpt {

struct StepReport {
  double loss = 0, grad_norm = 0, lr = 0, seconds = 0, comm_seconds = 0;
};

// Bytes this rank holds, by purpose.
struct Memory {
  double params = 0, grads = 0, optimizer = 0, activations = 0, ddp = 0;
  double activations_formula = 0;  // peak micro-batches in flight x what each keeps (Stage::saved_bytes)
  // Parameters, gradients and AdamW moments by formula, 16 bytes per parameter
  // of Stage::param_count; 0 under --zero, whose dt_zero holds its own.
  double state_formula = 0;
};

class Trainer {
 public:
  Trainer(const Options &o, const Corpus &corpus, dt_comm *world);
  ~Trainer();
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  StepReport step(int step);          // one optimizer step (from 0)
  double validation_loss();           // the mean loss over the held-out windows
  std::string sample(int chars);      // text generated from the model
  Memory memory() const;
  // Checkpoints (checkpoint.hpp), collective over the world: save after
  // `steps` steps; load returns the steps already taken, or throws saying why
  // the checkpoint was refused (nothing changed then).
  void save(const std::string &dir, int steps);
  int load(const std::string &dir);

  // The pipeline callbacks' bodies.
  void forward(int chunk, int mb, const float *input, float *output);
  void backward(int chunk, int mb, const float *grad_output, float *grad_input);
  void backward_weight(int chunk, int mb);  // ZB-H1's BACKWARD_WEIGHT

 private:
  struct Chunk {
    std::unique_ptr<Stage> stage;
    std::vector<Saved> saved;       // one per micro-batch of a step
    std::vector<int64_t> live_bytes;
  };
  float learning_rate(int step) const;
  double forward_only(std::vector<Saved> &per_chunk, int64_t seqs);
  bool loss_holder() const;
  CheckpointContext checkpoint_context();
  void zero_create();
  double zero_step(float lr);  // returns the gradient norm
  static dt_ddp *make_ddp(const std::vector<Param *> &params, dt_comm *comm, int ranks);
  void fill_windows(Saved &s, const std::vector<int32_t> &text, const std::vector<int64_t> &starts);
  double sum_over(dt_comm *c, double v);

  Options o_;
  const Corpus &corpus_;
  Config cfg_;
  dt_comm *world_;
  dt_mesh *mesh_ = nullptr;
  // model_: tp x pp x ep, over which the gradient norm adds up; replicas_:
  // dp x cp x ep, over which DDP averages dense gradients, and
  // expert_replicas_: dp x cp, the experts' (moe.h's gradient groups);
  // cp_pp_: where a sampled character is heard from.
  dt_comm *tp_ = nullptr, *cp_ = nullptr, *ep_ = nullptr, *pp_ = nullptr, *replicas_ = nullptr,
          *expert_replicas_ = nullptr, *model_ = nullptr, *cp_pp_ = nullptr;
  int tp_rank_ = 0, cp_rank_ = 0, ep_rank_ = 0, pp_rank_ = 0, dp_rank_ = 0;
  int data_rank_ = 0, data_ranks_ = 1;  // ep x dp split the data
  int64_t len_;                // tokens of each sequence on this rank: seq / cp
  std::vector<int64_t> where_; // their positions
  std::vector<Chunk> chunks_;
  std::vector<Param *> params_, dense_, experts_;
  AdamW adam_;
  dt_ddp *ddp_ = nullptr, *ddp_experts_ = nullptr;
  dt_zero *zero_ = nullptr;  // --zero: owns the optimizer and averages instead
  dt_pipeline *pipe_ = nullptr;
  int64_t mb_seqs_;  // sequences per micro-batch
  int peak_in_flight_ = 0;  // the schedule's, for this rank
  int step_ = 0;
  double loss_sum_ = 0, live_ = 0, peak_live_ = 0;
};

}  // namespace gpt
