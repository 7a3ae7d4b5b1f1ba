// dtbench checks. Two communicators of the same ranks, split from the job's,
// one comparing calls and one not (the variable is read when a communicator
// is made), take turns at rounds of blocking allreduces of one size, so that
// both see the same load on a shared machine; per round the time of one
// allreduce is the slowest rank's mean. The table gives the median round of
// each and their ratio.
#include "checks.hpp"

#include <dtrain.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench.h"
#include "comm.hpp"
#include "timing.hpp"
#include "command_line.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const Usage kCli{"checks", "usage: dtrun -n N dtbench checks [options]",
                 "Times blocking float32 allreduces with the comparison of calls across ranks\n"
                 "(DTRAIN_CHECK_COLLECTIVES=1) and without, in alternating rounds."};

struct Args {
  std::int64_t bytes = 8;
  long iters = 2000;
  long rounds = 11;
  std::string json;
};

// A communicator of the job's ranks with calls compared or not.
dt_comm* split_with_checks(Comm& job, bool on) {
  ::setenv("DTRAIN_CHECK_COLLECTIVES", on ? "1" : "0", 1);
  dt_comm* comm = nullptr;
  job.check("dt_comm_split", dt_comm_split(&comm, job.handle(), 0, job.rank()));
  return comm;
}

// Microseconds per allreduce over `iters`, the slowest rank's.
double time_round(Comm& job, dt_comm* comm, std::vector<float>& data, long iters) {
  int64_t shape[1] = {static_cast<int64_t>(data.size())};
  DLTensor t = {data.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
  job.check("dt_barrier", dt_barrier(comm));
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) job.check("dt_allreduce", dt_allreduce(comm, &t, &t, DT_SUM, nullptr, nullptr));
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  return job.max(took.count() / static_cast<double>(iters));
}

}  // namespace

int run_checks(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  add_bytes(*app, "--bytes", a.bytes, 4, "the allreduce's size (default 8; K, M, G: binary)");
  app->add_option("--iters", a.iters, "allreduces per round (default 2000)")
      ->type_name("N")
      ->check(CLI::Range(1L, 1L << 30));
  app->add_option("--rounds", a.rounds, "rounds of each (default 11)")->type_name("N")->check(CLI::Range(1L, 1000L));
  app->add_option("--json", a.json, "also write the results as JSON (rank 0)")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  Comm job;
  dt_comm* checked = split_with_checks(job, true);
  dt_comm* unchecked = split_with_checks(job, false);
  std::vector<float> data(static_cast<std::size_t>(a.bytes / 4), 1.0f);
  std::vector<double> with, without;
  // A first round of each, untimed, warms both up.
  time_round(job, checked, data, a.iters / 10 + 1);
  time_round(job, unchecked, data, a.iters / 10 + 1);
  for (long r = 0; r < a.rounds; ++r) {
    with.push_back(time_round(job, checked, data, a.iters));
    without.push_back(time_round(job, unchecked, data, a.iters));
  }
  const double on = median(with);
  const double off = median(without);
  if (job.rank() == 0) {
    std::printf("# %d ranks; blocking float32 allreduce; median of %ld rounds of %ld; us per allreduce\n",
                job.size(), a.rounds, a.iters);
    std::printf("%10s %14s %14s %10s\n", "bytes", "checks off", "checks on", "on/off");
    std::printf("%10lld %14.2f %14.2f %10.2f\n", static_cast<long long>(a.bytes), off, on, on / off);
    if (!a.json.empty()) {
      const Json doc = {{"benchmark", "checks"}, {"ranks", job.size()}, {"bytes", a.bytes}, {"iters", a.iters},
                        {"rounds", a.rounds},    {"off_us", off},       {"on_us", on},      {"ratio", on / off}};
      if (!write_results(kCli.command, a.json, doc)) job.exit(1);
    }
  }
  dt_comm_destroy(checked);
  dt_comm_destroy(unchecked);
  return 0;
}

}  // namespace dtbench
