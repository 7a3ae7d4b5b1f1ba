// dtbench halfconv. scaled_copy converts whole f16 arrays to and from f32
// (compressed gradients on their way into and out of a reduction) through
// device/cpu/half_array.hpp, which picks F16C where the CPU has it and the
// portable loops (half.hpp element by element, vectorised by the compiler)
// elsewhere. The reduction of two f16 arrays (device/cpu/reduce_loops.hpp:
// the baseline loops, and with AVX2 and F16C eight elements per
// conversion) makes the same choice. This times both on the same buffers, in
// one thread, so that the choice can be checked on a machine. Like dtbench
// handoff, it links the core library.
#include "halfconv.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "device/cpu/half.hpp"
#include "device/cpu/half_array.hpp"
#include "device/cpu/reduce_loops.hpp"
#include "command_line.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;
using dtrain::device::cpu::HalfLoops;

struct Args {
  std::int64_t elements = 1 << 20;
  long iters = 200;
  std::string json;
};

struct Row {
  const char* direction;  // "f16_to_f32", "f32_to_f16", "f16_sum"
  const char* path;       // "portable", "f16c"
  double mean_us, best_us;
  double gbps;  // bytes read and written per call over the best time
};

const Usage kCli{"halfconv", "usage: dtbench halfconv [options]",
                 "Times converting an array from f16 to f32 and from f32 to f16, and summing two f16 arrays, "
                 "with libdtrain's portable loops and with F16C (where the CPU has it). One process, one thread."};

// The mean and best time in microseconds of `iters` calls of `body`.
template <typename Body>
std::pair<double, double> time_calls(long iters, Body&& body) {
  body();  // warm-up: pages touched, caches filled
  double total = 0, best = 1e300;
  for (long i = 0; i < iters; ++i) {
    const auto start = Clock::now();
    body();
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    total += us;
    best = std::min(best, us);
  }
  return {total / static_cast<double>(iters), best};
}

int write_json(const Args& a, bool f16c, const std::vector<Row>& rows) {
  Json results = Json::array();
  for (const Row& r : rows) {
    results.push_back({{"direction", r.direction},
                       {"path", r.path},
                       {"mean_us", r.mean_us},
                       {"best_us", r.best_us},
                       {"GBps", r.gbps}});
  }
  const Json doc = {{"benchmark", "halfconv"},
                    {"elements", a.elements},
                    {"iters", a.iters},
                    {"f16c", f16c},
                    {"results", results}};
  return write_results(kCli.command, a.json, doc) ? 0 : 1;
}

}  // namespace

int run_halfconv(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  add_bytes(*app, "--elements", a.elements, 1, "elements per array (default 1M; K, M, G: binary)");
  app->add_option("--iters", a.iters, "timed calls per direction and path, after one warm-up (default 200)")
      ->type_name("N")
      ->check(CLI::Range(1L, 1L << 30));
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  // Finite values across f16's range, subnormals among them: the loops have
  // no branches, so what the values are changes nothing but must be typical.
  const auto n = static_cast<std::size_t>(a.elements);
  std::vector<float> floats(n), wide(n);
  std::vector<std::uint16_t> halves(n), narrow(n);
  for (std::size_t i = 0; i < n; ++i) {
    floats[i] = static_cast<float>(static_cast<int>(i % 8191) - 4095) * 1.5e-3f * static_cast<float>(1 + i % 11);
    halves[i] = dtrain::device::cpu::float_to_half(floats[i]);
  }

  const HalfLoops* f16c = dtrain::device::cpu::f16c_half_loops();
  std::vector<std::pair<const char*, const HalfLoops*>> paths{{"portable", &dtrain::device::cpu::portable_half_loops()}};
  if (f16c != nullptr) paths.emplace_back("f16c", f16c);

  // GB/s and the ratio come from the best call: other work on the machine
  // only ever makes a call slower.
  std::printf("# %lld elements; mean and best of %ld calls after one warm-up; F16C: %s\n",
              static_cast<long long>(a.elements), a.iters, f16c != nullptr ? "yes" : "not on this CPU");
  std::printf("%-11s %-9s %10s %10s %8s %17s\n", "direction", "path", "mean us", "best us", "GB/s", "best vs portable");
  std::vector<Row> rows;
  double portable_us = 0;
  // Times one path of `direction`; the first path of each is the portable one.
  auto record = [&](const char* direction, const char* path, double bytes, auto&& body) {
    const auto [mean, best] = time_calls(a.iters, body);
    if (std::string(path) == "portable") portable_us = best;
    rows.push_back({direction, path, mean, best, bytes / (best * 1e3)});
    std::printf("%-11s %-9s %10.1f %10.1f %8.2f %16.2fx\n", direction, path, mean, best, bytes / (best * 1e3),
                portable_us / best);
  };
  const double conversion_bytes = static_cast<double>(n) * (sizeof(float) + sizeof(std::uint16_t));
  for (const auto& [path, loops] : paths) {
    record("f16_to_f32", path, conversion_bytes,
           [&, loops = loops] { loops->widen(halves.data(), wide.data(), a.elements, 1.0f); });
  }
  for (const auto& [path, loops] : paths) {
    record("f32_to_f16", path, conversion_bytes,
           [&, loops = loops] { loops->narrow(floats.data(), narrow.data(), a.elements, 1.0f); });
  }
  // Two arrays read, one written.
  using dtrain::device::cpu::Reduction;
  const double sum_bytes = 3.0 * static_cast<double>(n) * sizeof(std::uint16_t);
  record("f16_sum", "portable", sum_bytes, [&] {
    dtrain::device::cpu::combine_generic(Reduction::sum, dtrain::DType::f16, narrow.data(), halves.data(),
                                         halves.data(), a.elements);
  });
#ifdef DTRAIN_REDUCE_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) {
    record("f16_sum", "f16c", sum_bytes, [&] {
      dtrain::device::cpu::combine_avx2(Reduction::sum, dtrain::DType::f16, narrow.data(), halves.data(),
                                        halves.data(), a.elements);
    });
  }
#endif
  return a.json.empty() ? 0 : write_json(a, f16c != nullptr, rows);
}

}  // namespace dtbench
