// dtbench pipeline: the bubble libdtrain's pipeline executor leaves, against
// the closed forms of dt_pipeline_schedule_bubble_fraction(). The stage
// functions busy-wait for known durations, the ones the closed forms assume:
// a chunk's forward takes one unit, its backward two (zero-bubble H1: the
// input and the weight gradient one unit each). Each step starts with a
// barrier. Two measured figures per case, averaged over ranks, the median
// over steps:
//   waits  what dt_pipeline_step_info reports: time blocked on receives / the
//          rank's own step time;
//   busy   1 - the rank's compute time / the slowest rank's step time, which
//          also counts a rank that finished early as idle until the last one
//          ends, as the closed forms do.
// With --work sleep the stage functions sleep instead of spinning, as a host
// thread waits for a GPU stage: the core is free for communication, and a
// machine loaded by other work delays a stage only by its wake-up, so the
// step time stays what the schedule makes it (what dtbench predict checks).
#include "pipeline.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "comm.hpp"
#include "command_line.hpp"
#include "timing.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const Usage kCli{"pipeline", "usage: dtrun -n P dtbench pipeline [options]",
                 "Runs libdtrain's pipeline executor over P ranks for every schedule kind and\n"
                 "several micro-batch counts, with stage functions that busy-wait (forward 1 unit,\n"
                 "backward 2; zero-bubble: 1 each for forward, input and weight gradient), and\n"
                 "prints the measured bubble beside the kind's closed form. Rank 0 prints."};

struct Args {
  int unit_us = 2000;
  int steps = 5;
  int elements = 4096;
  bool sleep = false;
  std::vector<int> microbatches{1, 2, 4, 8};
  std::string json;
};

// One value, so that a second --microbatches replaces the first list.
std::vector<int> parse_counts(const std::string& list) {
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    int count = 0;
    const auto [rest, error] = std::from_chars(item.data(), item.data() + item.size(), count);
    if (item.empty() || error != std::errc() || rest != item.data() + item.size() || count < 1 || count > 4096) {
      throw CLI::ValidationError("--microbatches", "'" + item + "' is not a count from 1 to 4096");
    }
    counts.push_back(count);
    start = end + 1;
  }
  return counts;
}

Args parse(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  app->add_option("--unit-us", a.unit_us, "one unit of stage work in microseconds (default 2000)")
      ->type_name("N")
      ->check(CLI::Range(1, 10000000));
  app->add_option("--steps", a.steps, "timed steps per case (default 5)")->type_name("N")->check(CLI::Range(1, 100000));
  app->add_option("--elements", a.elements, "float32 elements per activation (default 4096)")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 28));
  app->add_option_function<std::string>(
         "--work", [&a](const std::string& kind) { a.sleep = kind == "sleep"; },
         "spin (default): stage work busy-waits; sleep: it sleeps, as a\n"
         "host thread waiting for a GPU stage does")
      ->type_name("KIND")
      ->check(CLI::IsMember({"spin", "sleep"}));
  app->add_option_function<std::string>(
         "--microbatches", [&a](const std::string& list) { a.microbatches = parse_counts(list); },
         "comma-separated micro-batch counts, 1 to 4096 (default 1,2,4,8)")
      ->type_name("LIST");
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  return a;
}

// Synthetic stage work: spins (or sleeps) for `units` units and counts the
// time spent.
struct Work {
  std::chrono::microseconds unit;
  bool split_backward;
  bool sleep;
  double busy_seconds = 0;

  void spin(int units) {
    const Clock::time_point start = Clock::now();
    const Clock::time_point end = start + units * unit;
    if (sleep) std::this_thread::sleep_until(end);
    while (Clock::now() < end) {
    }
    busy_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  }

  static dt_status forward(void* user, int, int, const DLTensor*, DLTensor*) {
    static_cast<Work*>(user)->spin(1);
    return DT_OK;
  }
  static dt_status backward(void* user, int, int, const DLTensor*, DLTensor*) {
    auto* work = static_cast<Work*>(user);
    work->spin(work->split_backward ? 1 : 2);
    return DT_OK;
  }
  static dt_status backward_weight(void* user, int, int) {
    static_cast<Work*>(user)->spin(1);
    return DT_OK;
  }
};

// The step's figures are means over the ranks; a case reports their median
// over steps, so that a step a loaded machine held up (a stage function
// woken late) does not count as the schedule's bubble.
struct Case {
  dt_pipeline_schedule_kind kind;
  const char* name;
  int microbatches;
  double formula = 0;
  double step_ms = 0;  // the slowest rank's step
  double bubble_waits = 0;
  double bubble_busy = 0;
};


void measure(Comm& comm, const Args& a, Case& c) {
  dt_pipeline_schedule_options sopts = DT_PIPELINE_SCHEDULE_OPTIONS_INIT;
  sopts.kind = c.kind;
  sopts.stages = comm.size();
  sopts.microbatches = c.microbatches;
  dt_pipeline_schedule* schedule = nullptr;
  comm.check("dt_pipeline_schedule_create", dt_pipeline_schedule_create(&schedule, &sopts));
  comm.check("dt_pipeline_schedule_bubble_fraction", dt_pipeline_schedule_bubble_fraction(schedule, &c.formula));

  Work work{std::chrono::microseconds(a.unit_us), c.kind == DT_PIPELINE_ZB_H1, a.sleep};
  dt_pipeline_options opts = DT_PIPELINE_OPTIONS_INIT;
  opts.activation_elements = a.elements;
  opts.forward = &Work::forward;
  opts.backward = &Work::backward;
  opts.backward_weight = work.split_backward ? &Work::backward_weight : nullptr;
  opts.user = &work;
  dt_pipeline* pipeline = nullptr;
  comm.check("dt_pipeline_create", dt_pipeline_create(&pipeline, comm.handle(), schedule, &opts));

  comm.check("dt_pipeline_step (warm-up)", dt_pipeline_step(pipeline, nullptr));
  std::vector<double> waits, busy, slowest;
  for (int s = 0; s < a.steps; ++s) {
    comm.barrier();
    work.busy_seconds = 0;
    dt_pipeline_step_info info = DT_PIPELINE_STEP_INFO_INIT;
    comm.check("dt_pipeline_step", dt_pipeline_step(pipeline, &info));
    slowest.push_back(comm.max(info.step_seconds));
    double fractions[2] = {info.bubble_fraction, 1.0 - work.busy_seconds / slowest.back()};
    comm.sum(fractions, 2);
    waits.push_back(fractions[0] / comm.size());
    busy.push_back(fractions[1] / comm.size());
  }
  c.bubble_waits = median(waits);
  c.bubble_busy = median(busy);
  c.step_ms = 1e3 * median(slowest);
  dt_pipeline_destroy(pipeline);
  dt_pipeline_schedule_destroy(schedule);
}

void write_json(const std::string& path, const Args& a, int world, const std::vector<Case>& cases) {
  Json rows = Json::array();
  for (const Case& c : cases) {
    rows.push_back({{"kind", c.name},
                    {"microbatches", c.microbatches},
                    {"step_ms", c.step_ms},
                    {"bubble_formula", c.formula},
                    {"bubble_waits", c.bubble_waits},
                    {"bubble_busy", c.bubble_busy}});
  }
  const Json doc = {
      {"benchmark", "pipeline"}, {"implementation", "dtrain"}, {"library", dt_build_info()}, {"stages", world},
      {"unit_us", a.unit_us},    {"steps", a.steps},           {"elements", a.elements},     {"cases", rows}};
  write_results(kCli.command, path, doc);
}

}  // namespace

int run_pipeline(int argc, char** argv) {
  const Args a = parse(argc, argv);
  Comm comm;
  const int p = comm.size();
  std::vector<Case> cases;
  for (int m : a.microbatches) {
    cases.push_back({DT_PIPELINE_GPIPE, "gpipe", m});
    cases.push_back({DT_PIPELINE_1F1B, "1f1b", m});
    if (m % p == 0) cases.push_back({DT_PIPELINE_INTERLEAVED_1F1B, "interleaved_1f1b", m});
    cases.push_back({DT_PIPELINE_ZB_H1, "zb_h1", m});
  }
  for (Case& c : cases) measure(comm, a, c);
  if (comm.rank() == 0) {
    std::printf("dtbench pipeline: p = %d, unit = %d us (%s), %d steps, %d float32 per activation\n", p, a.unit_us,
                a.sleep ? "sleep" : "spin", a.steps, a.elements);
    std::printf("%-17s %3s %9s %8s %8s %8s\n", "kind", "m", "step_ms", "formula", "waits", "busy");
    for (const Case& c : cases) {
      std::printf("%-17s %3d %9.2f %8.4f %8.4f %8.4f\n", c.name, c.microbatches, c.step_ms, c.formula,
                  c.bubble_waits, c.bubble_busy);
    }
    std::printf(
        "waits = receive waits / own step (dt_pipeline_step_info); busy = 1 - compute / slowest step;\n"
        "each the mean over ranks, median over steps\n");
    if (!a.json.empty()) write_json(a.json, a, p, cases);
  }
  comm.exit(0);
}

}  // namespace dtbench
