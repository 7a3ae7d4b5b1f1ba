// dtbench zero: what each ZeRO stage costs a training step of the example
// model (examples/c/mlp) and what it keeps in memory on each rank.
//
// Every stage trains its own copy of the model (same initial weights, same
// batches) through the layer hooks, as train_mlp --zero does: one unit per
// layer, gathered before the layer runs and released after (stage 3; in
// stages 0-2 that returns at once and the units are the reduction buckets).
// The stages take turns round by round so that a noisy machine treats them
// alike, and every timed step starts with the ranks together.
//
// Memory comes from dt_zero_memory_usage(). Between steps a rank holds what
// the ZeRO paper's formulas count (f32 parameters, AdamW, no master weights):
//   stage 0  (4+4+8)Ψ   stage 1  8Ψ + 8Ψ/N   stage 2  4Ψ + 12Ψ/N   stage 3  16Ψ/N
// During a step it also holds the buffers zero.h states: unit gradient
// buffers and scratch (communication) and, in stage 3, gathered units. Every
// step reads the memory after each call that allocates (a lock and a copy,
// nothing beside a millisecond step) and keeps the largest total, so the
// library's peak can be compared with the formula plus the buffers held at
// that moment.
#include "zero.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "comm.hpp"
#include "command_line.hpp"
#include "training.hpp"

namespace dtbench {

namespace {

const Usage kCli{"zero", "usage: dtrun -n N dtbench zero [options]",
                 "Trains the example MLP (examples/c/mlp, float32) with libdtrain's ZeRO stages\n"
                 "and prints, per stage, the median step time and the bytes each rank holds by\n"
                 "purpose (dt_zero_memory_usage) against the ZeRO formula for float32\n"
                 "parameters and AdamW. One unit per layer. Rank 0 prints."};

constexpr int kStages = 4;

struct Args : TrainingOptions {
  int prefetch = 1;
  std::vector<int> stages{0, 1, 2, 3};
};

std::vector<int> parse_stages(const std::string& text) {
  std::vector<int> stages;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (item.size() != 1 || item[0] < '0' || item[0] >= '0' + kStages) kCli.error("--stages: bad stage '" + item + "'");
    int stage = item[0] - '0';
    if (std::find(stages.begin(), stages.end(), stage) != stages.end()) kCli.error("--stages: stage given twice");
    stages.push_back(stage);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return stages;
}

Args parse(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  app->add_option_function<std::string>(
         "--stages", [&a](const std::string& text) { a.stages = parse_stages(text); },
         "comma-separated stages to run (default 0,1,2,3)")
      ->type_name("LIST");
  add_training_options(*app, a, "stage");
  app->add_option("--prefetch", a.prefetch, "stage 3 gathers the next unit with each gather (default 1)")
      ->type_name("0|1")
      ->check(CLI::Range(0, 1));
  dtrain::command_line::parse(*app, argc, argv);
  check_training(kCli, a);
  return a;
}

int64_t total(const dt_zero_memory& m) {
  return m.parameters + m.gradients + m.optimizer_state + m.master_weights + m.communication;
}

// What a rank holds between steps by the ZeRO paper's count for float32
// parameters and AdamW (4 B parameter, 4 B gradient, 8 B of moments per
// element; no master weights), in bytes.
double formula_bytes(int stage, double psi, double n) {
  switch (stage) {
    case 0: return 16 * psi;
    case 1: return 8 * psi + 8 * psi / n;
    case 2: return 4 * psi + 12 * psi / n;
    default: return 16 * psi / n;
  }
}

const char* const kFormulas[kStages] = {"(4+4+8)Ψ", "8Ψ+8Ψ/N", "4Ψ+12Ψ/N", "16Ψ/N"};

// One timed step on one rank, in seconds.
struct Sample {
  double step = 0;    // forward to the end of dt_zero_step
  double gather = 0;  // in dt_zero_gather and dt_zero_gather_wait
  double wait = 0;    // in dt_zero_wait
  double update = 0;  // in dt_zero_step
};

// The example model trained by one dt_zero, one rank's part.
class Trainer {
 public:
  Trainer(Comm& comm, const Args& a, int stage)
      : comm_(comm), stage_(stage), replica_(comm, kCli, a), model_(replica_.model()) {
    size_t n = mlp_tensor_count(&model_);
    std::vector<DLTensor> params(n), grads(n);
    mlp_tensors(&model_, params.data(), grads.data());
    std::vector<const DLTensor*> param_ptrs;
    for (const DLTensor& t : params) param_ptrs.push_back(&t);

    // One unit per layer (its weight and bias), in every stage: the same
    // units are gathered in stage 3 and reduced in all four.
    std::vector<size_t> unit_sizes(static_cast<size_t>(model_.linear), 2);
    dt_zero_options o = DT_ZERO_OPTIONS_INIT;
    o.stage = stage;
    o.unit_sizes = unit_sizes.data();
    o.unit_count = unit_sizes.size();
    o.prefetch = a.prefetch;
    dt_optimizer_options oo = DT_OPTIMIZER_OPTIONS_INIT;
    oo.kind = DT_OPTIM_ADAMW;
    oo.lr = 2e-3f;
    comm.check("dt_zero_create", dt_zero_create(&zero_, comm.handle(), param_ptrs.data(), n, &oo, &o));
    comm.check("dt_zero_unit_count", dt_zero_unit_count(zero_, &units_));
    model_.hooks.enter = enter;
    model_.hooks.leave = leave;
    model_.hooks.user = this;
    // ZeRO averages the ranks' gradients uniformly: dividing the summed loss
    // by the mean shard size makes that the mean over the whole batch even
    // when it does not split evenly.
    model_.loss_divisor = static_cast<float>(a.batch) / static_cast<float>(comm.size());
  }

  ~Trainer() {
    dt_zero_destroy(zero_);
  }

  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  int stage() const { return stage_; }
  size_t units() const { return units_; }
  const mlp& model() const { return model_; }
  double first_loss() const { return first_loss_; }
  double last_loss() const { return last_loss_; }
  const dt_zero_memory& largest_seen() const { return largest_; }

  dt_zero_memory memory() {
    dt_zero_memory m = DT_ZERO_MEMORY_INIT;
    comm_.check("dt_zero_memory_usage", dt_zero_memory_usage(zero_, &m));
    return m;
  }

  Sample step() {
    // Data are made outside the timed part: the benchmark is about the step.
    replica_.load(step_);
    Sample s;
    gathering_ = 0;
    double t0 = now_s();
    double loss = replica_.forward();
    if (mlp_backward(&model_, ready, this) != 0) comm_.check("dt_zero_mark_ready", status_);
    double tw = now_s();
    comm_.check("dt_zero_wait", dt_zero_wait(zero_, -1));
    look();
    double tu = now_s();
    comm_.check("dt_zero_step", dt_zero_step(zero_, nullptr));
    double end = now_s();
    look();
    s.step = end - t0;
    s.gather = gathering_;
    s.wait = tu - tw;
    s.update = end - tu;
    if (step_ == 0) first_loss_ = loss;
    last_loss_ = loss;
    ++step_;
    return s;
  }

 private:
  static float* data(const DLTensor& t) { return reinterpret_cast<float*>(static_cast<char*>(t.data) + t.byte_offset); }

  static void enter(void* user, mlp* m, int layer, int backward) {
    auto* self = static_cast<Trainer*>(user);
    auto unit = static_cast<size_t>(layer);
    double t0 = now_s();
    self->comm_.check("dt_zero_gather", dt_zero_gather(self->zero_, unit));
    self->comm_.check("dt_zero_gather_wait", dt_zero_gather_wait(self->zero_, unit, -1));
    self->gathering_ += now_s() - t0;
    for (size_t i = 2 * unit; i < 2 * unit + 2; ++i) {
      DLTensor view{};
      self->comm_.check("dt_zero_parameter", dt_zero_parameter(self->zero_, i, &view));
      m->param[i] = data(view);
      if (!backward) continue;
      self->comm_.check("dt_zero_gradient", dt_zero_gradient(self->zero_, i, &view));
      m->grad[i] = data(view);
    }
    self->look();
  }

  static void leave(void* user, mlp*, int layer, int) {
    auto* self = static_cast<Trainer*>(user);
    self->comm_.check("dt_zero_release", dt_zero_release(self->zero_, static_cast<size_t>(layer)));
  }

  static int ready(void* user, size_t index) {
    auto* self = static_cast<Trainer*>(user);
    self->status_ = dt_zero_mark_ready(self->zero_, index);
    if (self->status_ == DT_OK) self->look();
    return self->status_ != DT_OK;
  }

  void look() {
    dt_zero_memory m = memory();
    if (total(m) > total(largest_)) largest_ = m;
  }

  Comm& comm_;
  int stage_;
  Replica replica_;
  mlp& model_;
  int64_t step_ = 0;
  dt_zero* zero_ = nullptr;
  size_t units_ = 0;
  double gathering_ = 0;
  double first_loss_ = 0, last_loss_ = 0;
  dt_zero_memory largest_ = DT_ZERO_MEMORY_INIT;
  dt_status status_ = DT_OK;
};

// One rank's memory figures for one stage, in bytes.
struct Memory {
  // Between steps, by purpose.
  double parameters = 0, gradients = 0, optimizer = 0, master = 0, communication = 0, padding = 0;
  double peak = 0;     // the library's peak since creation
  double buffers = 0;  // at the largest moment seen: communication plus gathered parameters
  double resting() const { return parameters + gradients + optimizer + master + communication; }
};
constexpr int kMemoryFields = 8;

// One stage's figures: times are medians over each rank's steps, in
// milliseconds, averaged over ranks; memory is every rank's.
struct Figures {
  int stage = 0;
  size_t units = 0;
  double step = 0, step_mean = 0, gather = 0, wait = 0, update = 0;
  double first_loss = 0, last_loss = 0;
  double formula = 0;
  std::vector<Memory> ranks;

  // The rank holding the most at its peak.
  const Memory& largest() const {
    return *std::max_element(ranks.begin(), ranks.end(),
                             [](const Memory& a, const Memory& b) { return a.peak < b.peak; });
  }
  size_t largest_rank() const { return static_cast<size_t>(&largest() - ranks.data()); }
};

double state_ratio(const Figures& f, const Memory& m) { return m.resting() / f.formula; }
double peak_ratio(const Figures& f, const Memory& m) { return m.peak / (f.formula + m.buffers); }

Figures summarise(Comm& comm, Trainer& t, const std::vector<Sample>& samples, int64_t batch) {
  Figures f;
  f.stage = t.stage();
  f.units = t.units();
  f.formula = formula_bytes(t.stage(), static_cast<double>(t.model().param_elems), comm.size());
  std::vector<double> step, gather, wait, update;
  for (const Sample& s : samples) {
    step.push_back(s.step * 1e3);
    gather.push_back(s.gather * 1e3);
    wait.push_back(s.wait * 1e3);
    update.push_back(s.update * 1e3);
  }
  double v[7] = {median(step), mean(step), median(gather), median(wait), median(update), t.first_loss(),
                 t.last_loss()};
  comm.sum(v, 7);
  f.step = v[0] / comm.size();
  f.step_mean = v[1] / comm.size();
  f.gather = v[2] / comm.size();
  f.wait = v[3] / comm.size();
  f.update = v[4] / comm.size();
  // The summed losses over every rank's samples, over the batch.
  f.first_loss = v[5] / static_cast<double>(batch);
  f.last_loss = v[6] / static_cast<double>(batch);

  // Every rank's figures, each in its own slot of one sum.
  dt_zero_memory rest = t.memory();
  const dt_zero_memory& at_peak = t.largest_seen();
  std::vector<double> all(static_cast<size_t>(comm.size()) * kMemoryFields, 0.0);
  double* mine = &all[static_cast<size_t>(comm.rank()) * kMemoryFields];
  mine[0] = static_cast<double>(rest.parameters);
  mine[1] = static_cast<double>(rest.gradients);
  mine[2] = static_cast<double>(rest.optimizer_state);
  mine[3] = static_cast<double>(rest.master_weights);
  mine[4] = static_cast<double>(rest.communication);
  mine[5] = static_cast<double>(rest.padding);
  mine[6] = static_cast<double>(rest.peak);
  // Gathered parameters are what that moment holds beyond the shards.
  mine[7] = static_cast<double>(at_peak.communication + std::max<int64_t>(0, at_peak.parameters - rest.parameters));
  comm.sum(all.data(), static_cast<int64_t>(all.size()));
  for (int r = 0; r < comm.size(); ++r) {
    const double* x = &all[static_cast<size_t>(r) * kMemoryFields];
    f.ranks.push_back({x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]});
  }
  return f;
}

double kib(double bytes) { return bytes / 1024.0; }

void print_tables(const std::vector<Figures>& figures) {
  std::printf("%-6s %6s %10s %10s %10s %10s %10s %12s %12s\n", "stage", "units", "step ms", "step mean",
              "gather ms", "wait ms", "update ms", "loss first", "loss last");
  for (const Figures& f : figures)
    std::printf("%-6d %6zu %10.3f %10.3f %10.3f %10.3f %10.3f %12.4f %12.4f\n", f.stage, f.units, f.step,
                f.step_mean, f.gather, f.wait, f.update, f.first_loss, f.last_loss);
  std::printf("\nmemory per rank in KiB, between steps (the rank with the largest peak):\n");
  std::printf("%-6s %4s %10s %10s %10s %10s %10s %9s %10s %10s %7s %10s %10s %7s\n", "stage", "rank", "params",
              "grads", "optimizer", "master", "comm", "padding", "total", "formula", "ratio", "peak", "buffers",
              "ratio");
  for (const Figures& f : figures) {
    const Memory& m = f.largest();
    std::printf("%-6d %4zu %10.1f %10.1f %10.1f %10.1f %10.1f %9.1f %10.1f %10.1f %7.4f %10.1f %10.1f %7.4f\n",
                f.stage, f.largest_rank(), kib(m.parameters), kib(m.gradients), kib(m.optimizer), kib(m.master),
                kib(m.communication), kib(m.padding), kib(m.resting()), kib(f.formula), state_ratio(f, m),
                kib(m.peak), kib(m.buffers), peak_ratio(f, m));
  }
  std::printf("total = params + grads + optimizer + master + comm (padding included); ratio = total / formula\n");
  std::printf("peak = dt_zero_memory_usage's peak; buffers = comm + gathered parameters at the largest total seen\n");
  std::printf("after any call of any step; the last ratio = peak / (formula + buffers)\n");
}

void write_json(const std::string& path, const Args& a, const mlp& m, int world, const std::vector<Figures>& figures) {
  Json stages = Json::array();
  for (const Figures& f : figures) {
    Json ranks = Json::array();
    for (size_t r = 0; r < f.ranks.size(); ++r) {
      const Memory& x = f.ranks[r];
      ranks.push_back({{"rank", r},
                       {"parameters", std::llround(x.parameters)},
                       {"gradients", std::llround(x.gradients)},
                       {"optimizer_state", std::llround(x.optimizer)},
                       {"master_weights", std::llround(x.master)},
                       {"communication", std::llround(x.communication)},
                       {"padding", std::llround(x.padding)},
                       {"total", std::llround(x.resting())},
                       {"peak", std::llround(x.peak)},
                       {"buffers_at_peak", std::llround(x.buffers)},
                       {"total_over_formula", state_ratio(f, x)},
                       {"peak_over_formula_plus_buffers", peak_ratio(f, x)}});
    }
    stages.push_back({{"stage", f.stage},
                      {"units", f.units},
                      {"step_ms", f.step},
                      {"step_ms_mean", f.step_mean},
                      {"gather_ms", f.gather},
                      {"wait_ms", f.wait},
                      {"update_ms", f.update},
                      {"first_loss", f.first_loss},
                      {"last_loss", f.last_loss},
                      {"formula", kFormulas[f.stage]},
                      {"formula_bytes", std::llround(f.formula)},
                      {"ranks", ranks}});
  }
  Json doc = training_results("zero", world, m);
  doc["model"]["dtype"] = "float32";
  doc.update(Json{{"optimizer", "adamw"},
                  {"batch", a.batch},
                  {"prefetch", a.prefetch != 0},
                  {"steps", a.steps},
                  {"rounds", a.rounds},
                  {"warmup", a.warmup},
                  {"stages", stages}});
  write_results(kCli.command, path, doc);
}

}  // namespace

int run_zero(int argc, char** argv) {
  Args a = parse(argc, argv);
  Comm comm;
  std::vector<Figures> figures;
  {
    std::vector<std::unique_ptr<Trainer>> trainers;
    for (int stage : a.stages) trainers.push_back(std::make_unique<Trainer>(comm, a, stage));
    const mlp& m = trainers.front()->model();
    if (comm.rank() == 0) {
      std::printf("# dtbench zero: %d rank%s; MLP %d", comm.size(), comm.size() == 1 ? "" : "s", m.dims[0]);
      for (int l = 1; l <= m.linear; ++l) std::printf(" -> %d", m.dims[l]);
      std::printf(" (Ψ = %lld float32 parameters); global batch %d; AdamW; one unit per layer; stage 3 prefetch %s\n",
                  static_cast<long long>(m.param_elems), a.batch, a.prefetch ? "on" : "off");
      std::printf("# formulas for float32 parameters (no master weights): stage 0 (4+4+8)Ψ, 1 8Ψ+8Ψ/N, "
                  "2 4Ψ+12Ψ/N, 3 16Ψ/N\n");
      std::printf("# %d rounds x %d steps per stage after %d warmup steps; %s\n", a.rounds, a.steps, a.warmup,
                  dt_build_info());
      std::fflush(stdout);
    }
    for (auto& t : trainers)
      for (int i = 0; i < a.warmup; ++i) t->step();
    std::vector<std::vector<Sample>> samples(trainers.size());
    // Ranks start every timed step together, so that a wait measures the
    // communication rather than how far apart the ranks drifted before it.
    for (int r = 0; r < a.rounds; ++r)
      for (size_t k = 0; k < trainers.size(); ++k)
        for (int i = 0; i < a.steps; ++i) {
          comm.barrier();
          samples[k].push_back(trainers[k]->step());
        }
    for (size_t k = 0; k < trainers.size(); ++k)
      figures.push_back(summarise(comm, *trainers[k], samples[k], a.batch));

    if (comm.rank() == 0) {
      print_tables(figures);
      if (!a.json.empty()) write_json(a.json, a, m, comm.size(), figures);
    }
  }
  comm.exit(0);
}

}  // namespace dtbench
