// dtbench gemm. For each shape (m x n x k, row-major, no transposes) the
// device layer's CPU GEMM (device::gemm on host memory, the path every
// strategy's local math takes) and cblas_sgemm called directly on the same
// f32 buffers, in interleaved rounds (time_cpu), the best round of each
// kept: on a machine shared with other work the fastest run is the one least
// disturbed. With one BLAS thread every product runs on this thread, so a
// round is timed by this thread's CPU time, which leaves out the time other
// processes held the core; with more, by the wall clock. With --clock wall
// every round is timed by the wall clock and the median round kept: the rate
// a rank gets while the machine is shared as it is now (run one copy per
// rank at once to see what each rank of a job gets), which is what
// tools/dtplan/calibrate.py fits the planner's GEMM rate to.
// Both run with the BLAS threads the device layer configures
// (DTRAIN_BLAS_THREADS, default 1), and the peak is that many cores'
// (cpu_peak.hpp). With --dtype bf16 or f16 the device layer multiplies
// 16-bit inputs (widened to f32 block by block) into an f32 C, still against
// the direct f32 sgemm. Where a CUDA device exists, the same shapes run
// through the device layer on it (cuBLAS), timed over --iters back-to-back
// products.
#include "gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/dtype.hpp"
#include "base/tensor.hpp"
#include "command_line.hpp"
#include "cpu_peak.hpp"
#include "device/cpu/blas_threads.hpp"
#include "device/cpu/convert.hpp"
#include "device/gemm.hpp"
#include "device/probe.hpp"
#include "timing.hpp"
#include "usage.hpp"
#ifdef DTRAIN_HAVE_CUDA
#include "device/cuda/error.hpp"
#include "device/cuda/runtime.hpp"
#endif

namespace dtbench {

namespace {

const Usage kCli{"gemm", "usage: dtbench gemm [options]",
                 "Times libdtrain's device-layer GEMM on the CPU against OpenBLAS's cblas_sgemm\n"
                 "called directly, and against the CPU's peak; on a CUDA device too, where one\n"
                 "exists. One process; BLAS threads from DTRAIN_BLAS_THREADS (default 1)."};

using Clock = std::chrono::steady_clock;
using dtrain::DType;
using dtrain::TensorView;

struct Shape {
  std::int64_t m, n, k;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

struct Args {
  std::vector<Shape> shapes = {{256, 256, 256},     {512, 512, 512},     {1024, 1024, 1024},
                               {2048, 2048, 2048},  {2048, 1024, 4096},  {2048, 4096, 1024}};
  DType dtype = DType::f32;
  long iters = 7;
  bool wall = false;  // --clock wall
  double ghz = 0;
  std::string json;
};

struct Row {
  Shape shape;
  double layer_gflops, direct_gflops, peak_share;
  double cuda_gflops;  // 0 without a device
};

std::vector<Shape> parse_shapes(const std::string& list) {
  std::vector<Shape> shapes;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    long long m = 0, n = 0, k = 0;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &tail) != 3 || m <= 0 || n <= 0 || k <= 0) {
      kCli.error("--shapes: '" + item + "' is not MxNxK with positive sizes");
    }
    shapes.push_back({m, n, k});
    start = end + 1;
  }
  return shapes;
}

DType parse_dtype(const std::string& name) {
  if (name == "f32") return DType::f32;
  if (name == "bf16") return DType::bf16;
  if (name == "f16") return DType::f16;
  kCli.error("--dtype: '" + name + "' is not f32, bf16 or f16");
}

template <typename F>
double seconds(F&& run) {
  const auto start = Clock::now();
  run();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

std::vector<std::uint16_t> to_sixteen_bits(const std::vector<float>& values, DType dtype) {
  std::vector<std::uint16_t> out(values.size());
  dtrain::device::cpu::scaled_copy(DType::f32, values.data(), dtype, out.data(), static_cast<std::int64_t>(values.size()),
                                   1.0);
  return out;
}

// Operands of one shape, random in [-1, 1): f32 for the direct call, and the
// device layer's inputs in its dtype (the same buffers when that is f32).
struct Operands {
  std::vector<float> a, b, c;
  std::vector<std::uint16_t> a_in, b_in;
  TensorView a_view, b_view, c_view;

  Operands(const Shape& s, DType dtype)
      : a(static_cast<std::size_t>(s.m * s.k)), b(static_cast<std::size_t>(s.k * s.n)),
        c(static_cast<std::size_t>(s.m * s.n)) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& x : a) x = uniform(rng);
    for (float& x : b) x = uniform(rng);
    if (dtype == DType::f32) {
      a_view = host_view(a.data(), s.m * s.k, dtype);
      b_view = host_view(b.data(), s.k * s.n, dtype);
    } else {
      // The same values rounded to 16 bits: a GPU's tensor cores run faster
      // on zeros than on data, so the operands are never left blank.
      a_in = to_sixteen_bits(a, dtype);
      b_in = to_sixteen_bits(b, dtype);
      a_view = host_view(a_in.data(), s.m * s.k, dtype);
      b_view = host_view(b_in.data(), s.k * s.n, dtype);
    }
    c_view = host_view(c.data(), s.m * s.n, DType::f32);
  }
};

dtrain::device::GemmShape gemm_shape(const Shape& s) {
  dtrain::device::GemmShape g;
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  return g;
}

// The device-layer and direct times per product over `iters` interleaved
// rounds, alternating which goes first: the best round of each, or with
// `wall` the median one. A round repeats each product until it has run for
// about kRoundSeconds, so that small shapes are timed over more than a
// scheduler tick.
constexpr double kRoundSeconds = 0.05;

// This thread's CPU time and the wall time of every timed round: with one
// BLAS thread, their ratio is the share of a core the machine gave it.
struct Share {
  double cpu = 0, wall = 0;
  double of_core() const { return wall > 0 ? cpu / wall : 0; }
};

std::pair<double, double> time_cpu(const Shape& s, Operands& o, long iters, bool one_thread, bool wall,
                                   Share& share) {
  const auto g = gemm_shape(s);
  auto layer = [&] { dtrain::device::gemm(g, o.a_view, o.b_view, o.c_view); };
  auto direct = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(s.m), static_cast<blasint>(s.n),
                static_cast<blasint>(s.k), 1.0f, o.a.data(), static_cast<blasint>(s.k), o.b.data(),
                static_cast<blasint>(s.n), 0.0f, o.c.data(), static_cast<blasint>(s.n));
  };
  // Warm-up (pages touched, OpenBLAS's buffers allocated), which also sizes
  // the rounds.
  layer();
  const double once = seconds(direct);
  const long repeats = std::max(1L, static_cast<long>(kRoundSeconds / std::max(once, 1e-9)));
  auto per_product = [&](auto& product) {
    const double cpu_start = thread_cpu_seconds();
    const double elapsed = seconds([&] {
      for (long r = 0; r < repeats; ++r) product();
    });
    const double cpu = thread_cpu_seconds() - cpu_start;
    share.cpu += cpu;
    share.wall += elapsed;
    return (one_thread && !wall ? cpu : elapsed) / static_cast<double>(repeats);
  };
  std::vector<double> layer_s, direct_s;
  for (long round = 0; round < iters; ++round) {
    if (round % 2 == 0) {
      layer_s.push_back(per_product(layer));
      direct_s.push_back(per_product(direct));
    } else {
      direct_s.push_back(per_product(direct));
      layer_s.push_back(per_product(layer));
    }
  }
  if (wall) return {median(layer_s), median(direct_s)};
  return {*std::min_element(layer_s.begin(), layer_s.end()), *std::min_element(direct_s.begin(), direct_s.end())};
}

#ifdef DTRAIN_HAVE_CUDA
// The mean time of `iters` back-to-back products of `host`'s operands, copied to CUDA device 0.
double time_cuda(const Shape& s, const Operands& host, long iters) {
  const DType dtype = host.a_view.dtype;
  namespace cuda = dtrain::device::cuda;
  cuda::DeviceGuard guard(0);
  const std::size_t in_size = dtrain::dtype_size(dtype);
  cuda::DeviceBuffer a(0, static_cast<std::size_t>(s.m * s.k) * in_size);
  cuda::DeviceBuffer b(0, static_cast<std::size_t>(s.k * s.n) * in_size);
  cuda::DeviceBuffer c(0, static_cast<std::size_t>(s.m * s.n) * sizeof(float));
  cuda::check(cudaMemcpy(a.data(), host.a_view.data, a.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda::check(cudaMemcpy(b.data(), host.b_view.data, b.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  auto view = [](void* data, std::int64_t count, DType t) {
    TensorView v = host_view(data, count, t);
    v.memory = dtrain::Memory::cuda;
    return v;
  };
  const auto g = gemm_shape(s);
  auto run = [&] {
    dtrain::device::gemm(g, view(a.data(), s.m * s.k, dtype), view(b.data(), s.k * s.n, dtype),
                         view(c.data(), s.m * s.n, DType::f32));
  };
  run();
  cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return seconds([&] {
           for (long i = 0; i < iters; ++i) run();
           cuda::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
         }) /
         static_cast<double>(iters);
}
#endif

int write_json(const Args& a, const CpuPeak& peak, int threads, const std::vector<Row>& rows, double core_share) {
  Json results = Json::array();
  for (const Row& r : rows) {
    Json row = {{"m", r.shape.m},
                {"n", r.shape.n},
                {"k", r.shape.k},
                {"layer_gflops", r.layer_gflops},
                {"direct_gflops", r.direct_gflops},
                {"ratio", r.layer_gflops / r.direct_gflops},
                {"peak_share", r.peak_share}};
    if (r.cuda_gflops > 0) row["cuda_gflops"] = r.cuda_gflops;
    results.push_back(std::move(row));
  }
  const Json doc = {{"benchmark", "gemm"},
                    {"dtype", dtrain::dtype_name(a.dtype)},
                    {"iters", a.iters},
                    {"clock", a.wall ? "wall" : "cpu"},
                    {"core_share", core_share},
                    {"blas_threads", threads},
                    {"cpu_ghz", peak.ghz},
                    {"cpu_reported_ghz", peak.reported_ghz},
                    {"cpu_flops_per_cycle", peak.flops_per_cycle},
                    {"cpu_units", peak.units},
                    {"cpu_peak_gflops", peak.gflops(threads)},
                    {"results", results}};
  return write_results(kCli.command, a.json, doc) ? 0 : 1;
}

}  // namespace

int run_gemm(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  app->add_option_function<std::string>(
         "--shapes", [&a](const std::string& list) { a.shapes = parse_shapes(list); },
         "comma-separated MxNxK (default 256x256x256,512x512x512,\n"
         "1024x1024x1024,2048x2048x2048,2048x1024x4096,2048x4096x1024)")
      ->type_name("LIST");
  app->add_option_function<std::string>(
         "--dtype", [&a](const std::string& name) { a.dtype = parse_dtype(name); },
         "the device layer's input dtype: f32 (default), bf16 or f16")
      ->type_name("T");
  app->add_option("--iters", a.iters, "timed rounds per shape, of at least 50 ms each, the best\nkept (default 7)")
      ->type_name("N")
      ->check(CLI::Range(1L, 1L << 20));
  app->add_option("--ghz", a.ghz, "the clock for the peak, instead of /proc/cpuinfo's")
      ->type_name("G")
      ->check(CLI::PositiveNumber);
  app->add_option_function<std::string>(
         "--clock", [&a](const std::string& clock) { a.wall = clock == "wall"; },
         "cpu (default): rounds timed by this thread's CPU time with\n"
         "one BLAS thread, the best kept; wall: by the wall clock,\n"
         "the median kept (what the machine gives now, load included)")
      ->type_name("C")
      ->check(CLI::IsMember({"cpu", "wall"}));
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  dtrain::device::cpu::configure_blas_threads();
  const int threads = dtrain::device::cpu::blas_threads();
  const CpuPeak peak = cpu_peak(a.ghz);
  const bool on_cuda = dtrain::device::cuda_device_count() > 0;
  std::printf("# CPU: %d BLAS thread%s; peak %.1f GFLOP/s = %d core%s x %.3f GHz x %d f32 FLOP/cycle (%s)\n",
              threads, threads == 1 ? "" : "s", peak.gflops(threads), threads, threads == 1 ? "" : "s", peak.ghz,
              peak.flops_per_cycle, peak.units.c_str());
  std::printf("# clock %s (/proc/cpuinfo reports %.3f GHz)\n", a.ghz > 0 ? "from --ghz" : "measured",
              peak.reported_ghz);
  std::printf("# device layer on %s inputs vs cblas_sgemm direct (f32); %s of %ld rounds (%s); GFLOP/s\n",
              dtrain::dtype_name(a.dtype), a.wall ? "median" : "best", a.iters,
              threads == 1 && !a.wall ? "thread CPU time" : "wall clock");
  if (!on_cuda) std::printf("# no CUDA rows: %s\n", dtrain::device::cuda_unavailable_reason().c_str());
  std::printf("%18s %10s %10s %7s %7s%s\n", "m x n x k", "layer", "direct", "ratio", "peak", on_cuda ? "       cuda" : "");
  std::vector<Row> rows;
  double worst_ratio = 1e30;
  Share share;
  for (const Shape& s : a.shapes) {
    Operands operands(s, a.dtype);
    const auto [layer_s, direct_s] = time_cpu(s, operands, a.iters, threads == 1, a.wall, share);
    Row r{s, s.flops() / layer_s / 1e9, s.flops() / direct_s / 1e9, 0, 0};
    r.peak_share = r.layer_gflops / peak.gflops(threads);
#ifdef DTRAIN_HAVE_CUDA
    if (on_cuda) r.cuda_gflops = s.flops() / time_cuda(s, operands, std::max(a.iters, 10L)) / 1e9;
#endif
    worst_ratio = std::min(worst_ratio, r.layer_gflops / r.direct_gflops);
    const std::string name =
        std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k);
    std::printf("%18s %10.2f %10.2f %7.3f %6.1f%%", name.c_str(), r.layer_gflops, r.direct_gflops,
                r.layer_gflops / r.direct_gflops, 100 * r.peak_share);
    if (on_cuda) std::printf(" %10.1f", r.cuda_gflops);
    std::printf("\n");
    rows.push_back(r);
  }
  std::printf("# lowest layer/direct ratio %.3f (target >= 0.95)\n", worst_ratio);
  if (threads == 1) {
    std::printf("# this thread had %.0f %% of a core while timed (CPU time / wall time)\n", 100 * share.of_core());
  }
  return a.json.empty() ? 0 : write_json(a, peak, threads, rows, threads == 1 ? share.of_core() : 0.0);
}

}  // namespace dtbench
