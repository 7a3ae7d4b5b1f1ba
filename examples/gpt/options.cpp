#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "command_line.hpp"

namespace gpt {

namespace {

// A whole number option in [lowest, 2^24].
void count(CLI::App &app, const char *flag, int &target, int lowest, const char *group, const char *help) {
  app.add_option(flag, target, help)->group(group)->type_name("N")->check(CLI::Range(lowest, 1 << 24));
}

// A non-negative number option.
void amount(CLI::App &app, const char *flag, float &target, const char *group, const char *help) {
  app.add_option(flag, target, help)->group(group)->type_name("X")->check(CLI::NonNegativeNumber);
}

}  // namespace

std::string parse_options(int argc, char **argv, Options &o) {
  CLI::App app("Trains a small GPT on ranks arranged as dp x tp x pp x cp x ep.", "train_gpt");
  dtrain::command_line::set_usage(app, "usage: train_gpt [options]      (under dtrun -n N for N ranks)");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  const char *mesh = "mesh (the product must be the number of ranks)";
  count(app, "--dp", o.dp, 1, mesh, "data parallel size (default 1)");
  count(app, "--tp", o.tp, 1, mesh, "tensor parallel size (default 1)");
  count(app, "--pp", o.pp, 1, mesh, "pipeline parallel size (default 1)");
  count(app, "--cp", o.cp, 1, mesh, "context parallel size: ring attention over zigzag shards (default 1)");
  count(app, "--ep", o.ep, 1, mesh,
        "expert parallel size: the experts split over ep ranks, which split\n"
        "the data as dp does (default 1; needs --experts)");
  app.add_option("--schedule", o.schedule,
                 "gpipe, 1f1b, interleaved or zb_h1 (zero bubble: the linear layers'\n"
                 "weight gradients delayed into the bubble) (default 1f1b)")
      ->group(mesh)
      ->type_name("S")
      ->check(CLI::IsMember({"gpipe", "1f1b", "interleaved", "zb_h1"}));
  auto *chunks = app.add_option("--chunks", o.chunks, "model chunks per pipeline rank for interleaved (default 2)")
                     ->group(mesh)
                     ->type_name("N")
                     ->check(CLI::Range(1, 1 << 24));
  count(app, "--microbatches", o.microbatches, 1, mesh, "micro-batches per step and data-parallel rank (default 4)");
  count(app, "--zero", o.zero, 0, mesh,
        "ZeRO stage 0-3 over dp x cp instead of DDP and the example's AdamW\n"
        "(with ep = 1; it clips by the norm over tp x pp too)");
  const char *model = "model and data";
  count(app, "--layers", o.layers, 1, model, "transformer blocks (default 4)");
  count(app, "--hidden", o.hidden, 1, model, "model width (default 128)");
  count(app, "--heads", o.heads, 1, model, "attention heads (default 4)");
  count(app, "--seq", o.seq, 2, model, "tokens per sequence (default 64)");
  count(app, "--experts", o.experts, 0, model, "every other block a mixture of E experts (default 0: none)");
  count(app, "--top-k", o.top_k, 1, model, "experts per token (default 2)");
  amount(app, "--moe-balance", o.moe_balance, model, "load-balancing loss coefficient (default 0.01)");
  app.add_option("--data", o.data, "a text file or a fortune directory (default /usr/share/games/fortunes)")
      ->group(model)
      ->type_name("PATH");
  const char *checkpoints = "checkpoints (any mesh resumes any other's)";
  app.add_option("--checkpoint", o.checkpoint, "save into DIR after step --save-at")
      ->group(checkpoints)
      ->type_name("DIR");
  count(app, "--save-at", o.save_at, 0, checkpoints, "the step after which to save");
  app.add_option("--resume", o.resume, "continue from the checkpoint in DIR up to --steps")
      ->group(checkpoints)
      ->type_name("DIR");
  const char *training = "training";
  count(app, "--steps", o.steps, 1, training, "steps (default 200)");
  count(app, "--batch", o.batch, 1, training, "sequences per step over all ranks (default 16)");
  amount(app, "--lr", o.lr, training, "peak learning rate (default 0.003)");
  count(app, "--warmup", o.warmup, 0, training, "linear warm-up steps (default 20)");
  amount(app, "--min-lr-ratio", o.min_lr_ratio, training, "the cosine decays to lr * X at the last step (default 0.1)");
  amount(app, "--clip", o.clip, training, "global gradient-norm clip (default 1)");
  amount(app, "--weight-decay", o.weight_decay, training, "AdamW decay (default 0)");
  app.add_option("--seed", o.seed, "weights, batches and sampling (default 1)")->group(training)->type_name("N");
  count(app, "--log-every", o.log_every, 1, training, "steps between progress lines (default 10)");
  count(app, "--eval-every", o.eval_every, 1, training, "steps between validation losses (default 50)");
  count(app, "--eval-seqs", o.eval_seqs, 1, training, "held-out windows of a validation loss (default 32)");
  count(app, "--sample", o.sample, 0, training, "characters generated at the end (default 300)");
  app.add_option("--json", o.json, "also write the mesh, model, tokens/s, losses and memory per rank here")
      ->group(training)
      ->type_name("PATH");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &) {
    std::fputs(app.help().c_str(), stdout);
    std::exit(0);
  } catch (const CLI::ParseError &e) {
    return std::string(e.what()) + " (--help lists the options)";
  }
  o.kind = o.schedule == "gpipe"    ? DT_PIPELINE_GPIPE
           : o.schedule == "1f1b"   ? DT_PIPELINE_1F1B
           : o.schedule == "zb_h1"  ? DT_PIPELINE_ZB_H1
                                    : DT_PIPELINE_INTERLEAVED_1F1B;
  if (o.kind == DT_PIPELINE_INTERLEAVED_1F1B && chunks->count() == 0) o.chunks = 2;
  if (o.kind != DT_PIPELINE_INTERLEAVED_1F1B && o.chunks != 1) return "--chunks: only the interleaved schedule has several";
  if (o.kind == DT_PIPELINE_INTERLEAVED_1F1B && o.chunks < 2) return "--chunks: interleaved needs at least 2";
  if (o.min_lr_ratio > 1.0f) return "--min-lr-ratio: at most 1";
  if ((o.save_at > 0) != !o.checkpoint.empty()) return "--checkpoint and --save-at go together";
  if (o.save_at > o.steps) return "--save-at " + std::to_string(o.save_at) + " is after the last step";
  return "";
}

std::string check_mesh(const Options &o, int world, int64_t vocab) {
  std::ostringstream why;
  long long ranks = (long long)o.dp * o.tp * o.pp * o.cp * o.ep;
  auto divides = [&why](long long what, const char *what_name, long long by, const char *by_name) {
    if (what % by == 0) return true;
    why << what_name << " = " << what << " does not divide by " << by_name << " = " << by;
    return false;
  };
  if (ranks != world) {
    why << "--dp " << o.dp << " x --tp " << o.tp << " x --pp " << o.pp << " x --cp " << o.cp << " x --ep " << o.ep
        << " = " << ranks << " ranks, but the world has " << world;
  } else if (o.ep > 1 && o.experts == 0) {
    why << "--ep " << o.ep << " needs experts to split (--experts E)";
  } else if (o.experts > 0 && o.top_k > o.experts) {
    why << "--top-k " << o.top_k << " is more than --experts " << o.experts;
  } else if (o.zero > 3) {
    why << "--zero " << o.zero << ": the stages are 0 to 3";
  } else if (o.zero >= 0 && o.ep > 1) {
    why << "--zero needs --ep 1: experts and dense weights are replicated over different ranks "
           "(dp x cp against dp x cp x ep), and one dt_zero shards over one communicator";
  } else if (o.zero >= 0 && (!o.checkpoint.empty() || !o.resume.empty())) {
    why << "--zero does not take checkpoints here (the optimizer state is inside the dt_zero)";
  } else if (divides(o.heads, "--heads", o.tp, "--tp") && divides(o.hidden, "--hidden", o.heads, "--heads") &&
             divides(vocab, "the padded vocabulary", o.tp, "--tp") &&
             divides(o.layers, "--layers", (long long)o.pp * o.chunks, "--pp x --chunks") &&
             divides(o.experts, "--experts", o.ep, "--ep") &&
             divides(o.batch, "--batch", (long long)o.dp * o.ep * o.microbatches, "--dp x --ep x --microbatches") &&
             divides(o.eval_seqs, "--eval-seqs", (long long)o.dp * o.ep, "--dp x --ep") &&
             (o.cp == 1 || divides(o.seq, "--seq", 2LL * o.cp, "2 x --cp (zigzag halves)"))) {
    if (o.kind == DT_PIPELINE_INTERLEAVED_1F1B) divides(o.microbatches, "--microbatches", o.pp, "--pp");
  }
  return why.str();
}

}  // namespace gpt
