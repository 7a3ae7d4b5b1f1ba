// One way of running a step (the planner's unit of search), what the planner
// is told to search over, and what it estimates for each way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plan/transformer.hpp"

namespace dtrain::plan {

// Values of dt_pipeline_schedule_kind.
enum class Schedule { gpipe = 0, one_f_one_b = 1, interleaved = 2, zb_h1 = 3 };

struct Config {
  int dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  int zero_stage = 0;
  Schedule schedule = Schedule::one_f_one_b;
  int virtual_stages = 1;  // model chunks per pipeline rank (interleaved: >= 2)
  std::int64_t micro_batch = 1;
  Recompute recompute = Recompute::none;

  int gpus() const { return dp * tp * pp * cp * ep; }
};

// Bits of Options::dimensions; data parallelism takes the GPUs left.
enum class Dimension { tp = 0, pp = 1, cp = 2, ep = 3 };

struct Options {
  std::int64_t global_batch = 0;  // sequences per step
  unsigned dimensions = 0xF;      // bits tp, pp, cp, ep (Dimension): searched; others stay 1
  unsigned zero_stages = 0xF;     // bit s: try ZeRO stage s
  unsigned schedules = 0x7;       // bit k: try Schedule k (with pp > 1); zb_h1 only when asked
  unsigned recompute = 0x7;       // bit k: try Recompute k
  std::int64_t max_micro_batch = 8;
  int max_virtual_stages = 4;     // interleaved: v in 2..this
  bool sequence_parallel = true;  // with tp > 1
  double memory_fraction = 0.9;   // share of GPU memory a plan may use
  std::size_t keep = 100;         // feasible configurations kept, fastest first
};

// Bytes per GPU, on the pipeline stage that needs most.
struct Memory {
  std::int64_t parameters = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer_state = 0;
  std::int64_t master_weights = 0;
  std::int64_t activations = 0;                    // with the configuration's recomputation
  std::int64_t activations_without_recompute = 0;  // what they would be without it
  std::int64_t communication = 0;
  std::int64_t total = 0;
};

// Seconds per step, each a share of the critical path.
struct Time {
  double compute = 0;                             // forward and backward on the slowest stage
  double recompute = 0;                           // forward passes run again in backward
  double bubble = 0;                              // pipeline fill and drain
  double tp = 0, cp = 0, ep = 0, pp = 0, dp = 0;  // exposed communication per dimension
  double optimizer = 0;
  double step = 0;
};

struct Estimate {
  Config config;
  std::int64_t micro_batches = 0;  // per step per pipeline
  Memory memory;
  Time time;
  double model_flops = 0;     // per step, all GPUs
  double hardware_flops = 0;  // model_flops plus recomputation
  double mfu = 0;             // model_flops / (step * gpus * peak)
  double tflops_per_gpu = 0;  // hardware_flops / (step * gpus) / 1e12
};

}  // namespace dtrain::plan
