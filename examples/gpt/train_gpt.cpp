/*
 * Trains a character-level GPT on real text with data, tensor and pipeline
 * parallelism: the ranks form a dt_mesh of tp x dp x pp; each pipeline rank
 * holds its stages' layers, split over the tensor-parallel ranks; the
 * pipeline executor runs the schedule; DDP averages the gradients over the
 * data-parallel ranks; AdamW steps with the global gradient norm clipped and
 * a warm-up + cosine learning rate.
 *
 *   dtrun -n 8 ./train_gpt --dp 2 --tp 2 --pp 2 --schedule 1f1b
 *   ./train_gpt --steps 20                      one process, the reference
 *
 * Prints a line every --log-every steps (loss, learning rate, gradient norm,
 * tokens/s, step time, the share of the step spent waiting on
 * communication), the validation loss every --eval-every steps, and at the
 * end the unigram entropy of the text, memory per rank by purpose and a
 * sample of generated text. Exits 1 when the final validation loss is not
 * below the unigram entropy (nothing learnt), 2 on a bad command line.
 */
#include <cblas.h>
#include <dtrain.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "options.hpp"
#include "tensor.hpp"
#include "text.hpp"
#include "trainer.hpp"

namespace {

constexpr int64_t kVocabPad = 8;  // the vocabulary is padded to a multiple of this, for tensor parallelism

// Prints every rank's memory by purpose (rank 0) and returns the table,
// rank after rank, in the order of the printed columns (bytes).
std::vector<double> print_memory(dt_comm *world, int rank, int size, const gpt::Memory &m) {
  std::vector<double> mine{m.params, m.grads, m.optimizer, m.state_formula, m.activations, m.activations_formula,
                           m.ddp};
  std::vector<double> all(mine.size() * (size_t)size);
  int64_t n = (int64_t)mine.size(), total = (int64_t)all.size();
  DLTensor send{mine.data(), {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, &n, nullptr, 0};
  DLTensor recv{all.data(), {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, &total, nullptr, 0};
  gpt::check(dt_allgather(world, &send, &recv, nullptr, nullptr), "dt_allgather");
  if (rank != 0) return all;
  std::printf("memory per rank (MiB): rank  parameters  gradients  adamw-state  (formula)  activations(peak)  "
              "(formula)  ddp-buckets\n");
  for (int r = 0; r < size; ++r) {
    const double *v = &all[(size_t)r * mine.size()];
    std::printf("                       %4d  %10.2f  %9.2f  %11.2f  %9.2f  %17.2f  %9.2f  %11.2f\n", r,
                v[0] / 1048576, v[1] / 1048576, v[2] / 1048576, v[3] / 1048576, v[4] / 1048576, v[5] / 1048576,
                v[6] / 1048576);
  }
  std::printf("(adamw-state: two f32 moments per parameter; its formula: parameters, gradients and moments "
              "together, 16 bytes per parameter the configuration gives the rank; activations: what the "
              "forwards keep for their backwards at the most micro-batches in flight, measured, and by formula: "
              "that peak times what one keeps)\n");
  return all;
}

// The run's figures, for benchmarks/run_gpt.sh (rank 0).
void write_json(const gpt::Options &o, int size, double tokens_per_s, double comm_share, double loss, double val,
                const std::vector<double> &memory) {
  using Json = nlohmann::ordered_json;
  Json ranks = Json::array();
  const size_t columns = memory.size() / (size_t)size;
  for (int r = 0; r < size; ++r) {
    const double *v = &memory[(size_t)r * columns];
    ranks.push_back({{"rank", r},
                     {"parameters", std::llround(v[0])},
                     {"gradients", std::llround(v[1])},
                     {"adamw_state", std::llround(v[2])},
                     {"state_formula", std::llround(v[3])},
                     {"activations", std::llround(v[4])},
                     {"activations_formula", std::llround(v[5])},
                     {"ddp_buckets", std::llround(v[6])}});
  }
  const Json doc = {{"benchmark", "gpt"},
                    {"side", "dtrain"},
                    {"ranks", size},
                    {"dp", o.dp},
                    {"tp", o.tp},
                    {"pp", o.pp},
                    {"cp", o.cp},
                    {"ep", o.ep},
                    {"schedule", o.schedule},
                    {"microbatches", o.microbatches},
                    {"layers", o.layers},
                    {"hidden", o.hidden},
                    {"heads", o.heads},
                    {"seq", o.seq},
                    {"batch", o.batch},
                    {"steps", o.steps},
                    {"tokens_per_s", tokens_per_s},
                    {"comm_share", comm_share},
                    {"final_loss", loss},
                    {"validation_loss", val},
                    {"memory_bytes", ranks}};
  std::ofstream out(o.json);
  out << doc.dump(2) << "\n";
  if (!out.flush()) throw std::runtime_error("cannot write " + o.json);
}

int run(int argc, char **argv, dt_comm *world, int rank, int size) {
  gpt::Options o;
  std::string bad = gpt::parse_options(argc, argv, o);
  if (!bad.empty()) {
    if (rank == 0) std::fprintf(stderr, "train_gpt: %s\n", bad.c_str());
    return 2;
  }
  gpt::Corpus corpus = gpt::load_corpus(o.data, o.seq, kVocabPad);
  bad = gpt::check_mesh(o, size, corpus.vocab);
  if (!bad.empty()) {
    if (rank == 0) std::fprintf(stderr, "train_gpt: %s\n", bad.c_str());
    return 2;
  }
  gpt::Trainer trainer(o, corpus, world);
  double entropy = gpt::unigram_entropy(corpus);
  if (rank == 0) {
    std::printf("train_gpt: %d ranks as dp %d x tp %d x pp %d, schedule %s (%d chunk%s per rank), %d micro-batches\n",
                size, o.dp, o.tp, o.pp, o.schedule.c_str(), o.chunks, o.chunks > 1 ? "s" : "", o.microbatches);
    std::printf("text: %s (%lld file%s), %zu training and %zu held-out characters, vocabulary %zu (padded to %lld)\n",
                corpus.source.c_str(), (long long)corpus.files, corpus.files == 1 ? "" : "s", corpus.train.size(),
                corpus.val.size(), corpus.bytes.size(), (long long)corpus.vocab);
    std::printf("model: %d layers, hidden %d, %d heads, context %d; batch %d sequences (%d tokens) per step\n",
                o.layers, o.hidden, o.heads, o.seq, o.batch, o.batch * o.seq);
    std::fflush(stdout);
  }
  int start = 0;
  if (!o.resume.empty()) {
    start = trainer.load(o.resume);
    if (rank == 0) std::printf("resumed from %s after step %d\n", o.resume.c_str(), start);
  }
  double val = 0, tokens = 0, seconds = 0, comm = 0, loss = 0;
  for (int step = start; step < o.steps; ++step) {
    gpt::StepReport r = trainer.step(step);
    loss = r.loss;
    if (step > start) {  // the first step warms the connections up
      tokens += (double)o.batch * o.seq;
      seconds += r.seconds;
      comm += r.comm_seconds;
    }
    bool last = step + 1 == o.steps, eval = (step + 1) % o.eval_every == 0 || last;
    if (eval) val = trainer.validation_loss();
    if (rank == 0 && ((step + 1) % o.log_every == 0 || step == 0 || last)) {
      std::printf("step %5d/%d  loss %.7f  lr %.2e  grad-norm %.4f  %8.0f tok/s  %7.1f ms  comm %3.0f%%", step + 1,
                  o.steps, r.loss, r.lr, r.grad_norm, (double)o.batch * o.seq / r.seconds, r.seconds * 1e3,
                  100.0 * r.comm_seconds / r.seconds);
      if (eval) std::printf("  val %.4f", val);
      std::printf("\n");
      std::fflush(stdout);
    }
    if (step + 1 == o.save_at) {
      trainer.save(o.checkpoint, step + 1);
      if (rank == 0) std::printf("saved %s after step %d\n", o.checkpoint.c_str(), step + 1);
    }
  }
  std::vector<double> memory = print_memory(world, rank, size, trainer.memory());
  double rate = seconds > 0 ? tokens / seconds : 0.0, share = seconds > 0 ? comm / seconds : 0.0;
  // Before the sample, while the other ranks still wait in its collectives:
  // a rank that ends first may have the launcher stop this one.
  if (rank == 0 && !o.json.empty()) write_json(o, size, rate, share, loss, val, memory);
  std::string text = trainer.sample(o.sample);
  if (rank == 0) {
    std::printf("summary: %.0f tokens/s over steps %d-%d, %.0f%% of the step waiting on communication (rank 0)\n",
                rate, start + 2, o.steps, 100.0 * share);
    std::printf("validation loss %.4f nats/char against the text's unigram entropy %.4f nats/char (%s)\n", val,
                entropy, val < entropy ? "below: the model uses context" : "NOT below: nothing learnt");
    std::printf("sample:\n%s\n", text.c_str());
  }
  return val < entropy ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);  // one thread per rank: ranks already share the cores
#endif
  dt_comm *world = nullptr;
  dt_status s = dt_comm_create(&world, nullptr);
  if (s != DT_OK) {
    std::fprintf(stderr, "train_gpt: dt_comm_create: %s\n", dt_error_last());
    return 1;
  }
  int rank = 0, size = 1;
  dt_comm_rank(world, &rank);
  dt_comm_size(world, &size);
  int code;
  try {
    code = run(argc, argv, world, rank, size);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "rank %d: train_gpt: %s\n", rank, e.what());
    dt_comm_abort(world);
    code = 1;
  }
  std::fflush(stdout);
  dt_comm_destroy(world);
  return code;
}
