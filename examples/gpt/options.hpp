// The command line of train_gpt, and the checks of the mesh against the
// world and the model that can be made before any rank communicates.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <string>

namespace gpt {

struct Options {
  int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  std::string schedule = "1f1b";
  dt_pipeline_schedule_kind kind = DT_PIPELINE_1F1B;
  int chunks = 1;  // model chunks per pipeline rank (interleaved: 2 unless given)
  int microbatches = 4, zero = -1;
  int steps = 200, batch = 16, seq = 64, hidden = 128, heads = 4, layers = 4;
  int warmup = 20, log_every = 10, eval_every = 50, eval_seqs = 32, sample = 300;
  int experts = 0, top_k = 2;  // experts 0: no MoE blocks
  float moe_balance = 0.01f;
  float lr = 3e-3f, min_lr_ratio = 0.1f, clip = 1.0f, weight_decay = 0.0f;
  uint64_t seed = 1;
  std::string data = "/usr/share/games/fortunes";
  std::string checkpoint, resume;  // where to save (with save_at) and what to resume
  int save_at = 0;                 // save after this many steps (0: never)
  std::string json;                // where rank 0 writes the run's figures (empty: nowhere)
};

// Parses argv; prints the usage and exits 0 for --help. Returns an empty
// string, or what is wrong with the command line.
std::string parse_options(int argc, char **argv, Options &o);

// What is wrong with running `o` on `world` ranks over a vocabulary of
// `vocab` (empty when nothing is): the product of the sizes must be the
// world, and every split must divide what it splits.
std::string check_mesh(const Options &o, int world, int64_t vocab);

}  // namespace gpt
