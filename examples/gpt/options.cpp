#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace gpt {

namespace {

const char kUsage[] =
    "usage: train_gpt [options]      (under dtrun -n N for N ranks)\n"
    "mesh (the product must be the number of ranks):\n"
    "  --dp N --tp N --pp N      data, tensor and pipeline parallel sizes (default 1)\n"
    "  --cp N                    context parallel size: ring attention over zigzag shards (default 1)\n"
    "  --ep N                    expert parallel size: the experts split over ep ranks, which split\n"
    "                            the data as dp does (default 1; needs --experts)\n"
    "  --schedule S              gpipe, 1f1b or interleaved (default 1f1b)\n"
    "  --chunks N                model chunks per pipeline rank for interleaved (default 2)\n"
    "  --microbatches N          micro-batches per step and data-parallel rank (default 4)\n"
    "  --zero S                  ZeRO stage 0-3 over dp instead of DDP and the example's AdamW\n"
    "                            (only with tp = pp = ep = 1: its gradient norm spans the dp ranks)\n"
    "model and data:\n"
    "  --layers N --hidden N --heads N --seq N   (default 4, 128, 4, 64)\n"
    "  --experts E --top-k K     every other block a mixture of E experts, K per token (default 0: none, 2)\n"
    "  --moe-balance X           load-balancing loss coefficient (default 0.01)\n"
    "  --data PATH               a text file or a fortune directory (default /usr/share/games/fortunes)\n"
    "checkpoints (any mesh resumes any other's):\n"
    "  --checkpoint DIR --save-at N   save into DIR after step N\n"
    "  --resume DIR              continue from the checkpoint in DIR up to --steps\n"
    "training:\n"
    "  --steps N --batch N       steps, and sequences per step over all ranks (default 200, 16)\n"
    "  --lr X --warmup N         peak learning rate and linear warm-up steps (default 0.003, 20)\n"
    "  --min-lr-ratio X          the cosine decays to lr * X at the last step (default 0.1)\n"
    "  --clip X --weight-decay X global gradient-norm clip and AdamW decay (default 1, 0)\n"
    "  --seed N                  weights, batches and sampling (default 1)\n"
    "  --log-every N --eval-every N --eval-seqs N --sample N\n"
    "                            progress lines, validation loss, held-out windows, characters generated\n"
    "                            at the end (default 10, 50, 32, 300)\n"
    "  --json PATH               also write the mesh, model, tokens/s, losses and memory per rank here\n";

bool to_int(const char *s, long long lo, long long hi, int &out) {
  char *end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0' || v < lo || v > hi) return false;
  out = (int)v;
  return true;
}

}  // namespace

std::string parse_options(int argc, char **argv, Options &o) {
  struct IntOpt {
    const char *name;
    int *target;
    int lo;
  } ints[] = {{"--dp", &o.dp, 1},           {"--tp", &o.tp, 1},
              {"--pp", &o.pp, 1},           {"--cp", &o.cp, 1},
              {"--ep", &o.ep, 1},           {"--chunks", &o.chunks, 1},
              {"--microbatches", &o.microbatches, 1}, {"--zero", &o.zero, 0},
              {"--steps", &o.steps, 1},     {"--batch", &o.batch, 1},
              {"--seq", &o.seq, 2},         {"--hidden", &o.hidden, 1},
              {"--heads", &o.heads, 1},     {"--layers", &o.layers, 1},
              {"--warmup", &o.warmup, 0},   {"--log-every", &o.log_every, 1},
              {"--eval-every", &o.eval_every, 1}, {"--eval-seqs", &o.eval_seqs, 1},
              {"--sample", &o.sample, 0},   {"--experts", &o.experts, 0},
              {"--top-k", &o.top_k, 1},     {"--save-at", &o.save_at, 0}};
  struct FloatOpt {
    const char *name;
    float *target;
  } floats[] = {{"--lr", &o.lr}, {"--min-lr-ratio", &o.min_lr_ratio}, {"--clip", &o.clip},
                {"--weight-decay", &o.weight_decay},
                {"--moe-balance", &o.moe_balance}};
  bool chunks_given = false;
  for (int i = 1; i < argc; ++i) {
    const char *name = argv[i];
    if (!std::strcmp(name, "-h") || !std::strcmp(name, "--help")) {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) return std::string(name) + " needs a value";
    const char *value = argv[++i];
    bool known = false;
    for (auto &opt : ints)
      if (!std::strcmp(name, opt.name)) {
        if (!to_int(value, opt.lo, 1 << 24, *opt.target))
          return std::string(name) + ": '" + value + "' is not an integer >= " + std::to_string(opt.lo);
        known = true;
        chunks_given |= opt.target == &o.chunks;
      }
    for (auto &opt : floats)
      if (!std::strcmp(name, opt.name)) {
        char *end = nullptr;
        double v = std::strtod(value, &end);
        if (end == value || *end != '\0' || !(v >= 0.0))
          return std::string(name) + ": '" + value + "' is not a non-negative number";
        *opt.target = (float)v;
        known = true;
      }
    if (known) continue;
    if (!std::strcmp(name, "--seed")) {
      char *end = nullptr;
      o.seed = std::strtoull(value, &end, 10);
      if (end == value || *end != '\0') return std::string("--seed: '") + value + "' is not an integer";
    } else if (!std::strcmp(name, "--data")) {
      o.data = value;
    } else if (!std::strcmp(name, "--checkpoint")) {
      o.checkpoint = value;
    } else if (!std::strcmp(name, "--json")) {
      o.json = value;
    } else if (!std::strcmp(name, "--resume")) {
      o.resume = value;
    } else if (!std::strcmp(name, "--schedule")) {
      o.schedule = value;
      if (o.schedule == "gpipe")
        o.kind = DT_PIPELINE_GPIPE;
      else if (o.schedule == "1f1b")
        o.kind = DT_PIPELINE_1F1B;
      else if (o.schedule == "interleaved")
        o.kind = DT_PIPELINE_INTERLEAVED_1F1B;
      else
        return std::string("--schedule: '") + value + "' is not gpipe, 1f1b or interleaved";
    } else {
      return std::string("unknown option '") + name + "' (--help lists them)";
    }
  }
  if (o.kind == DT_PIPELINE_INTERLEAVED_1F1B && !chunks_given) o.chunks = 2;
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
  } else if (o.zero >= 0 && (o.tp > 1 || o.pp > 1 || o.ep > 1)) {
    why << "--zero needs --tp, --pp and --ep 1: ZeRO clips by the gradient norm over the ranks it shards "
           "over, which is the whole model's only when no other dimension splits it";
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
