#include "training.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace dtbench {

namespace {

// The example task's sizes, as train_mlp has them.
constexpr int kInputs = 64;
constexpr int kClasses = 10;

}  // namespace

void add_training_options(CLI::App& app, TrainingOptions& a, const char* unit) {
  const std::string per = std::string(" per ") + unit;
  const auto count = [&app](const char* flag, int& target, int lowest, const std::string& help) {
    app.add_option(flag, target, help)->type_name("N")->check(CLI::Range(lowest, 1 << 24));
  };
  count("--steps", a.steps, 1, "timed steps" + per + " and round (default 30)");
  count("--rounds", a.rounds, 1, std::string("rounds; each runs every ") + unit + " once (default 5)");
  count("--warmup", a.warmup, 0, "untimed steps" + per + " first (default 10)");
  count("--batch", a.batch, 1, "global batch (default 256)");
  count("--hidden", a.hidden, 1, "hidden width (default 256)");
  count("--layers", a.layers, 0, "hidden layers (default 2)");
  app.add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
}

void check_training(const Usage& usage, const TrainingOptions& a) {
  if (a.layers + 1 > MLP_MAX_LINEAR) usage.error("--layers: at most " + std::to_string(MLP_MAX_LINEAR - 1));
}

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

Json training_results(const char* benchmark, int world_size, const mlp& model) {
  return {{"benchmark", benchmark},
          {"implementation", "dtrain"},
          {"library", dt_build_info()},
          {"world_size", world_size},
          {"model",
           {{"dims", std::vector<int>(model.dims, model.dims + model.linear + 1)}, {"parameters", model.param_elems}}}};
}

Replica::Replica(Comm& comm, const Usage& usage, const TrainingOptions& a) : batch_(a.batch) {
  if (a.batch < comm.size()) usage.error("--batch is smaller than the number of ranks");
  mlp_blas_single_thread();
  syn_shard(a.batch, comm.rank(), comm.size(), &begin_, &count_);
  int shard_max = (a.batch + comm.size() - 1) / comm.size();
  if (syn_task_init(&task_, 1, kInputs, kClasses) != 0 ||
      mlp_create(&model_, kInputs, a.hidden, a.layers, kClasses, shard_max) != 0) {
    std::fprintf(stderr, "dtbench %s: rank %d: out of memory\n", usage.command, comm.rank());
    comm.exit(1);
  }
  x_.resize(static_cast<size_t>(shard_max) * kInputs);
  y_.resize(static_cast<size_t>(shard_max));
  mlp_init_params(&model_, syn_key(1, SYN_STREAM_INIT));
}

Replica::~Replica() {
  mlp_destroy(&model_);
  syn_task_free(&task_);
}

void Replica::load(int64_t step) {
  syn_samples(&task_, SYN_STREAM_TRAIN, step * batch_ + begin_, static_cast<int>(count_), x_.data(), y_.data());
}

double Replica::forward() {
  int64_t correct = 0;
  return mlp_forward(&model_, x_.data(), y_.data(), static_cast<int>(count_), &correct);
}

}  // namespace dtbench
