// What dtbench ddp and dtbench zero share: the options of a training
// benchmark, the clock and statistics of its steps, and one rank's example
// model (examples/c/mlp) with its shard of the synthetic batches.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "comm.hpp"
#include "timing.hpp"
#include "mlp/mlp.h"
#include "mlp/synthetic.h"
#include "usage.hpp"

namespace dtbench {

struct TrainingOptions {
  int steps = 30, rounds = 5, warmup = 10, batch = 256, hidden = 256, layers = 2;
  std::string json;
};

// Adds the options every training benchmark takes to `app`; `unit` is what
// each round runs once ("mode", "stage").
void add_training_options(CLI::App& app, TrainingOptions& options, const char* unit);
// Checks them together after parsing; a usage error exits.
void check_training(const Usage& usage, const TrainingOptions& options);

double now_s();
double mean(const std::vector<double>& v);

// What every training benchmark's JSON starts with: the benchmark's name,
// the implementation and library, the world size and the model (its layer
// widths and parameter count); the caller adds the rest in its order.
Json training_results(const char* benchmark, int world_size, const mlp& model);

// One rank's example model and its shard of each step's global batch.
// Creating one is a usage error unless every rank has samples in a batch,
// and leaves BLAS on one thread.
class Replica {
 public:
  Replica(Comm& comm, const Usage& usage, const TrainingOptions& options);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  mlp& model() { return model_; }
  const mlp& model() const { return model_; }
  // Samples this rank takes of each batch.
  int64_t count() const { return count_; }
  // Makes this rank's samples of step `step`'s batch.
  void load(int64_t step);
  // Forward on the loaded samples: the summed loss.
  double forward();

 private:
  int64_t batch_;
  int64_t begin_ = 0, count_ = 0;
  syn_task task_{};
  mlp model_{};
  std::vector<float> x_;
  std::vector<int32_t> y_;
};

}  // namespace dtbench
