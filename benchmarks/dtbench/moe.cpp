// dtbench moe. Every rank routes its tokens with dt_moe_route (random
// logits, seeded by rank), plans the exchange once, then times, iteration by
// iteration and interleaved so that a noisy machine treats them alike:
//   dispatch   dt_moe_dispatch (tokens to the experts' ranks)
//   combine    dt_moe_combine (expert outputs back, weighted sum)
//   alltoallv  two dt_alltoallv calls with the same per-rank counts, there
//              and back: the bytes a dispatch and a combine move, without
//              the permutations, the weighted sum or the ranks' agreement
// Each figure is the mean per iteration of the slowest rank. With --device
// cuda the tokens, rows and weights are on each rank's CUDA device (routing
// and the plan stay on the host, as the library computes them there), and
// each timing ends once the device has run the work.
#include "moe.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "comm.hpp"
#include "command_line.hpp"
#include "device_copies.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const Usage kCli{"moe", "usage: dtrun -n N dtbench moe [options]",
                 "Times an MoE layer's dispatch and combine over the world (ep = N) against two\n"
                 "dt_alltoallv calls moving the same bytes. Rank 0 prints."};

struct Args {
  int tokens = 4096;
  int hidden = 1024;
  int experts = 8;
  int top_k = 2;
  int iters = 20;
  int warmup = 3;
  bool cuda = false;  // --device cuda
  std::string json;
};

Args parse(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  app->add_option("--tokens", a.tokens, "tokens per rank (default 4096)")
      ->type_name("N")
      ->check(CLI::Range(0, 1 << 24));
  app->add_option("--hidden", a.hidden, "hidden size H, float32 (default 1024)")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 20));
  app->add_option("--experts", a.experts, "experts E, a multiple of N ranks (default 8)")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 16));
  app->add_option("--top-k", a.top_k, "experts per token (default 2)")->type_name("N")->check(CLI::Range(1, 1 << 16));
  app->add_option("--iters", a.iters, "timed iterations (default 20)")->type_name("N")->check(CLI::Range(1, 1 << 20));
  app->add_option("--warmup", a.warmup, "untimed iterations first (default 3)")
      ->type_name("N")
      ->check(CLI::Range(0, 1 << 20));
  std::string device = "cpu";
  app->add_option("--device", device, "cpu (host memory, the default) or cuda (each rank's CUDA device)")
      ->type_name("WHERE")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  if (a.top_k > a.experts) kCli.error("--top-k must not exceed --experts");
  a.cuda = device == "cuda";
  if (a.cuda && cuda_devices() == 0) {
    kCli.error("--device cuda: no CUDA device here, or a dtbench built without CUDA");
  }
  return a;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A host array with its DLTensor, of any shape.
template <typename T>
struct Buffer {
  std::vector<T> data;
  std::vector<int64_t> shape;
  DLTensor tensor{};

  Buffer(std::vector<int64_t> dims, DLDataType dtype) : shape(std::move(dims)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.resize(static_cast<size_t>(n));
    tensor.data = data.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int>(shape.size());
    tensor.dtype = dtype;
    tensor.shape = shape.data();
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};

enum Timed { kDispatch = 0, kCombine = 1, kAlltoallv = 2, kTimed = 3 };
const char* const kTimedNames[kTimed] = {"dispatch", "combine", "alltoallv x2"};

// The elements this rank sends to each rank and receives from each, as a
// dispatch moves them: rows per destination times H, and their transpose
// across ranks.
struct Counts {
  std::vector<int64_t> send, recv;
  int64_t sent = 0, received = 0;
};

Counts exchange_counts(Comm& comm, const Buffer<int64_t>& experts, const Args& a) {
  const int ranks = comm.size();
  const int local = a.experts / ranks;
  Buffer<int64_t> rows_to({ranks}, kI64);
  Buffer<int64_t> rows_from({ranks}, kI64);
  for (int64_t e : experts.data) {
    if (e >= 0) ++rows_to.data[static_cast<size_t>(e / local)];
  }
  comm.check("dt_alltoall", dt_alltoall(comm.handle(), &rows_to.tensor, &rows_from.tensor, nullptr, nullptr));
  Counts c;
  for (int r = 0; r < ranks; ++r) {
    c.send.push_back(rows_to.data[static_cast<size_t>(r)] * a.hidden);
    c.recv.push_back(rows_from.data[static_cast<size_t>(r)] * a.hidden);
    c.sent += c.send.back();
    c.received += c.recv.back();
  }
  return c;
}

void write_json(const std::string& path, const Args& a, int world, double plan_ms, const double* ms,
                double median_ratio, int64_t bytes_sent) {
  const Json doc = {{"benchmark", "moe"},
                    {"implementation", "dtrain"},
                    {"world_size", world},
                    {"ep", world},
                    {"device", a.cuda ? "cuda" : "cpu"},
                    {"tokens_per_rank", a.tokens},
                    {"hidden", a.hidden},
                    {"experts", a.experts},
                    {"top_k", a.top_k},
                    {"iterations", a.iters},
                    {"rank0_bytes_each_way", bytes_sent},
                    {"plan_ms", plan_ms},
                    {"dispatch_ms", ms[kDispatch]},
                    {"combine_ms", ms[kCombine]},
                    {"dispatch_plus_combine_ms", ms[kDispatch] + ms[kCombine]},
                    {"alltoallv_there_and_back_ms", ms[kAlltoallv]},
                    {"ratio_to_alltoallv", (ms[kDispatch] + ms[kCombine]) / ms[kAlltoallv]},
                    {"median_iteration_ratio_to_alltoallv", median_ratio}};
  write_results(kCli.command, path, doc);
}

}  // namespace

int run_moe(int argc, char** argv) {
  const Args a = parse(argc, argv);
  Comm comm;
  if (a.experts % comm.size() != 0) kCli.error("--experts must be a multiple of the number of ranks");

  dt_moe_options opts = DT_MOE_OPTIONS_INIT;
  opts.num_experts = a.experts;
  opts.top_k = a.top_k;
  opts.normalize = 1;
  Buffer<float> logits({a.tokens, a.experts}, kF32);
  std::mt19937 random(1234u + static_cast<unsigned>(comm.rank()));
  std::normal_distribution<float> normal;
  for (float& v : logits.data) v = normal(random);
  Buffer<float> weights({a.tokens, a.top_k}, kF32);
  Buffer<int64_t> experts({a.tokens, a.top_k}, kI64);
  comm.check("dt_moe_route", dt_moe_route(&logits.tensor, &opts, &weights.tensor, &experts.tensor, nullptr));

  comm.barrier();
  double t0 = now_s();
  dt_moe_plan* plan = nullptr;
  comm.check("dt_moe_plan_create", dt_moe_plan_create(&plan, comm.handle(), &experts.tensor, a.hidden, &opts));
  const double plan_ms = comm.max(now_s() - t0) * 1e3;
  int64_t rows = 0;
  comm.check("dt_moe_plan_received", dt_moe_plan_received(plan, &rows));

  Buffer<float> tokens({a.tokens, a.hidden}, kF32);
  for (float& v : tokens.data) v = normal(random);
  Buffer<float> received({rows, a.hidden}, kF32);
  Buffer<float> output({a.tokens, a.hidden}, kF32);
  const Counts counts = exchange_counts(comm, experts, a);
  Buffer<float> send({counts.sent}, kF32);
  Buffer<float> recv({counts.received}, kF32);
  DeviceCopies on_device;
  if (a.cuda) {
    for (Buffer<float>* b : {&weights, &tokens, &received, &output, &send, &recv}) {
      on_device.move(b->tensor, b->data.size() * sizeof(float));
    }
  }

  double total[kTimed] = {0, 0, 0};
  // Each iteration's (dispatch + combine) / (alltoallv x2), slowest rank's
  // times: the two sides ran back to back, so the ratio holds when this
  // machine's speed drifts between iterations, as the means may not.
  std::vector<double> ratios;
  for (int it = 0; it < a.warmup + a.iters; ++it) {
    double seconds[kTimed];
    comm.barrier();
    t0 = now_s();
    comm.check("dt_moe_dispatch", dt_moe_dispatch(plan, &tokens.tensor, &received.tensor));
    seconds[kDispatch] = now_s() - t0;
    comm.barrier();
    t0 = now_s();
    comm.check("dt_moe_combine", dt_moe_combine(plan, &received.tensor, &weights.tensor, &output.tensor));
    seconds[kCombine] = now_s() - t0;
    comm.barrier();
    t0 = now_s();
    comm.check("dt_alltoallv", dt_alltoallv(comm.handle(), &send.tensor, counts.send.data(), &recv.tensor,
                                            counts.recv.data(), nullptr, nullptr));
    comm.check("dt_alltoallv", dt_alltoallv(comm.handle(), &recv.tensor, counts.recv.data(), &send.tensor,
                                            counts.send.data(), nullptr, nullptr));
    if (a.cuda) cuda_synchronize();  // on a device the alltoallvs may return before their copies have run
    seconds[kAlltoallv] = now_s() - t0;
    if (it >= a.warmup) {
      for (int k = 0; k < kTimed; ++k) total[k] += seconds[k];
      double slowest[kTimed];
      for (int k = 0; k < kTimed; ++k) slowest[k] = comm.max(seconds[k]);
      ratios.push_back((slowest[kDispatch] + slowest[kCombine]) / slowest[kAlltoallv]);
    }
  }
  double ms[kTimed];
  for (int k = 0; k < kTimed; ++k) ms[k] = comm.max(total[k] / a.iters) * 1e3;
  dt_moe_plan_destroy(plan);
  std::sort(ratios.begin(), ratios.end());
  const double median_ratio = ratios[ratios.size() / 2];

  if (comm.rank() == 0) {
    const double mib = static_cast<double>(counts.sent) * sizeof(float) / (1 << 20);
    std::printf("# dtbench moe: ep = %d; %d tokens per rank, H = %d (float32), E = %d, k = %d, %s\n", comm.size(),
                a.tokens, a.hidden, a.experts, a.top_k, a.cuda ? "CUDA" : "host memory");
    std::printf("# rank 0 sends %.2f MiB each way; %d iterations after %d warmup; slowest rank's mean\n", mib,
                a.iters, a.warmup);
    std::printf("%-22s %10s\n", "operation", "ms");
    std::printf("%-22s %10.3f\n", "plan (once)", plan_ms);
    for (int k = 0; k < kTimed; ++k) std::printf("%-22s %10.3f\n", kTimedNames[k], ms[k]);
    std::printf("%-22s %10.3f\n", "dispatch + combine", ms[kDispatch] + ms[kCombine]);
    std::printf("dispatch + combine / alltoallv x2 = %.2f (means); %.2f (median of iterations)\n",
                (ms[kDispatch] + ms[kCombine]) / ms[kAlltoallv], median_ratio);
    if (!a.json.empty()) write_json(a.json, a, comm.size(), plan_ms, ms, median_ratio, counts.sent * 4);
  }
  comm.exit(0);
}

}  // namespace dtbench
