// dtbench cp. Causal ring attention forward (dt_cp_ring_attention_forward)
// over this job's ranks, in both layouts, measured three ways, each the mean
// of --iters calls started together after a barrier:
//   ring     the call itself (the slowest rank's time)
//   compute  on each rank, the same blocks attended to and merged one after
//            another with dt_cp_attention / dt_cp_attention_merge, no
//            communication: the rank's share of the work
//   transfer the cp - 1 key/value shifts of the ring alone (dt_send and
//            dt_recv of the same blocks), no compute
// hidden share = (compute + transfer - ring) / transfer, with the slowest
// rank's figures, clamped to [0, 1]: the part of the transfers the ring did
// not wait for. Rank balance = the slowest rank's compute over the mean;
// on a machine with fewer free cores than ranks, ranks that compute at the
// same time slow each other, so the balance of the work itself is also
// given: the slowest rank's count of visible (query, key) pairs over the
// mean, counted from the layout's positions.
// Rank 0 also times dt_cp_attention over the whole sequence alone (the same
// kernel, one rank), which the ring's time is compared with.
//
// With --backward, the ring is timed forward and backward
// (dt_cp_ring_attention_backward after the forward), and so is the whole
// sequence on rank 0, through the same two calls on a communicator of rank 0
// alone; the decomposition into compute and transfers is the forward's only,
// so it is left out.
//
// With --device cuda, every tensor is on the rank's CUDA device (local rank
// modulo the devices there are): the ring and the whole sequence (through the
// ring's calls on a communicator of rank 0 alone) are timed as with
// --backward, forward alone unless --backward is given.
#include "cp.hpp"

#include <dtrain.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm.hpp"
#include "command_line.hpp"
#include "device_copies.hpp"
#include "host_tensor.hpp"
#include "timing.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const Usage kCli{"cp", "usage: dtrun -n N dtbench cp [options]",
                 "Times causal ring attention (forward) over the job's ranks in the contiguous\n"
                 "and zigzag layouts: the call, each rank's compute alone and the key/value\n"
                 "transfers alone, the share of the transfers hidden behind compute, each rank's\n"
                 "share of the work, and attention over the whole sequence on one rank with the\n"
                 "same kernel (--backward: forward and backward, the call and the whole sequence\n"
                 "only). Rank 0 prints."};

struct Args {
  int seq = 1024;
  int heads = 4;
  int kv_heads = 4;
  int head_dim = 64;
  int iters = 3;
  bool backward = false;
  bool cuda = false;  // --device cuda
  std::string json;

  // Whether the forward's split into compute and transfers is measured.
  bool split() const { return !backward && !cuda; }
};

// One rank's tensors for a sequence of `rows` local tokens.
struct Shard {
  HostTensor<float> q, k, v, o, lse, block_o, block_lse, d_o, dq, dk, dv;
  HostTensor<std::int64_t> q_positions, k_positions;

  Shard(const Args& a, std::int64_t rows)
      : q({rows, a.heads, a.head_dim}), k({rows, a.kv_heads, a.head_dim}), v({rows, a.kv_heads, a.head_dim}),
        o({rows, a.heads, a.head_dim}), lse({rows, a.heads}), block_o({rows, a.heads, a.head_dim}),
        block_lse({rows, a.heads}), d_o({rows, a.heads, a.head_dim}), dq({rows, a.heads, a.head_dim}),
        dk({rows, a.kv_heads, a.head_dim}), dv({rows, a.kv_heads, a.head_dim}), q_positions({rows}),
        k_positions({rows}) {
    // Values in [-1, 1): the scores stay moderate, as in a trained model.
    for (HostTensor<float>* t : {&q, &k, &v, &d_o}) t->fill_uniform(12345, 1.0F);
    if (a.cuda) place_on_cuda();
  }

  // Ring attention over `comm` (forward, then backward when `backward`).
  void ring(Comm& checker, dt_comm* comm, dt_cp_layout layout, bool backward) {
    checker.check("dt_cp_ring_attention_forward",
                  dt_cp_ring_attention_forward(comm, layout, 1, 0.0, q.get(), k.get(), v.get(), o.get(), lse.get()));
    if (!backward) return;
    checker.check("dt_cp_ring_attention_backward",
                  dt_cp_ring_attention_backward(comm, layout, 1, 0.0, q.get(), k.get(), v.get(), o.get(), lse.get(),
                                                d_o.get(), dq.get(), dk.get(), dv.get()));
  }

 private:
  // The float tensors become copies on this rank's CUDA device, which their
  // DLTensors describe from then on (the positions stay on the host: only
  // the split, which --device cuda leaves out, uses them).
  void place_on_cuda() {
    for (HostTensor<float>* t : {&q, &k, &v, &o, &lse, &block_o, &block_lse, &d_o, &dq, &dk, &dv}) {
      on_device_.move(*t->get(), t->data().size() * sizeof(float));
    }
  }

  DeviceCopies on_device_;
};

// This rank's blocks, one after another, as the ring would compute them.
void compute_alone(Comm& comm, dt_cp_layout layout, Shard& s) {
  const int size = comm.size();
  comm.check("dt_cp_positions", dt_cp_positions(layout, size, comm.rank(), s.q_positions.get()));
  for (int step = 0; step < size; ++step) {
    const int owner = (comm.rank() - step + size) % size;
    comm.check("dt_cp_positions", dt_cp_positions(layout, size, owner, s.k_positions.get()));
    DLTensor* o = step == 0 ? s.o.get() : s.block_o.get();
    DLTensor* lse = step == 0 ? s.lse.get() : s.block_lse.get();
    comm.check("dt_cp_attention", dt_cp_attention(s.q.get(), s.k.get(), s.v.get(), s.q_positions.get(),
                                                  s.k_positions.get(), 1, 0.0, o, lse));
    if (step > 0) {
      comm.check("dt_cp_attention_merge",
                 dt_cp_attention_merge(s.o.get(), s.lse.get(), s.block_o.get(), s.block_lse.get()));
    }
  }
}

// The ring's cp - 1 shifts of [k; v] alone.
void transfer_alone(Comm& comm, std::vector<float>& current, std::vector<float>& next) {
  const int size = comm.size();
  std::int64_t count = static_cast<std::int64_t>(current.size());
  for (int step = 0; step + 1 < size; ++step) {
    DLTensor send{current.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &count, nullptr, 0};
    DLTensor recv{next.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &count, nullptr, 0};
    dt_request* received = nullptr;
    dt_request* sent = nullptr;
    comm.check("dt_recv", dt_recv(comm.handle(), &recv, (comm.rank() + size - 1) % size, step, nullptr, &received));
    comm.check("dt_send", dt_send(comm.handle(), &send, (comm.rank() + 1) % size, step, nullptr, &sent));
    comm.check("dt_request_wait", dt_request_wait(received, -1));
    comm.check("dt_request_wait", dt_request_wait(sent, -1));
    dt_request_free(received);
    dt_request_free(sent);
    current.swap(next);
  }
}

// The largest of `values` over their mean.
double max_over_mean(const std::vector<double>& values) {
  double mean = 0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  return *std::max_element(values.begin(), values.end()) / mean;
}

// The (query, key) pairs the causal mask leaves this rank, over all blocks.
double visible_pairs(Comm& comm, dt_cp_layout layout, Shard& s) {
  const int size = comm.size();
  comm.check("dt_cp_positions", dt_cp_positions(layout, size, comm.rank(), s.q_positions.get()));
  double pairs = 0;
  for (int owner = 0; owner < size; ++owner) {
    comm.check("dt_cp_positions", dt_cp_positions(layout, size, owner, s.k_positions.get()));
    for (std::int64_t q : s.q_positions.data()) {
      for (std::int64_t k : s.k_positions.data()) pairs += k <= q ? 1 : 0;
    }
  }
  return pairs;
}

struct LayoutResult {
  const char* layout;
  double ring_ms;
  double transfer_ms;
  std::vector<double> compute_ms;     // per rank
  std::vector<double> visible_pairs;  // per rank

  double slowest_compute() const { return *std::max_element(compute_ms.begin(), compute_ms.end()); }
  double balance() const { return max_over_mean(compute_ms); }
  double work_balance() const { return max_over_mean(visible_pairs); }
  double hidden() const {
    if (transfer_ms <= 0) return 0;
    return std::clamp((slowest_compute() + transfer_ms - ring_ms) / transfer_ms, 0.0, 1.0);
  }
};

LayoutResult measure(Comm& comm, const Args& a, dt_cp_layout layout) {
  const std::int64_t rows = a.seq / comm.size();
  Shard s(a, rows);
  LayoutResult r{layout == DT_CP_ZIGZAG ? "zigzag" : "contiguous", 0, 0, {}, {}};
  r.ring_ms = comm.max(mean_ms(comm, a.iters, [&] { s.ring(comm, comm.handle(), layout, a.backward); }));
  if (!a.split()) return r;
  std::vector<double> compute(static_cast<std::size_t>(comm.size()), 0.0);
  compute[static_cast<std::size_t>(comm.rank())] = mean_ms(comm, a.iters, [&] { compute_alone(comm, layout, s); });
  comm.sum(compute.data(), static_cast<std::int64_t>(compute.size()));
  r.compute_ms = compute;
  std::vector<double> pairs(static_cast<std::size_t>(comm.size()), 0.0);
  pairs[static_cast<std::size_t>(comm.rank())] = visible_pairs(comm, layout, s);
  comm.sum(pairs.data(), static_cast<std::int64_t>(pairs.size()));
  r.visible_pairs = pairs;
  std::vector<float> current(2 * s.k.data().size()), next(current.size());
  r.transfer_ms = comm.max(mean_ms(comm, a.iters, [&] { transfer_alone(comm, current, next); }));
  return r;
}

// Attention over the whole sequence, causal, on rank 0 alone: dt_cp_attention,
// or with --backward or --device cuda the ring's calls on a communicator of
// rank 0 alone.
double full_attention_ms(Comm& comm, const Args& a) {
  dt_comm* alone = nullptr;
  const bool through_ring = !a.split();
  if (through_ring) comm.check("dt_comm_split", dt_comm_split(&alone, comm.handle(), comm.rank(), 0));
  double total = 0;
  if (comm.rank() == 0) {
    Shard s(a, a.seq);
    comm.check("dt_cp_positions", dt_cp_positions(DT_CP_CONTIGUOUS, 1, 0, s.q_positions.get()));
    for (int i = 0; i < a.iters; ++i) {
      const auto start = Clock::now();
      if (through_ring) {
        s.ring(comm, alone, DT_CP_CONTIGUOUS, a.backward);
      } else {
        comm.check("dt_cp_attention", dt_cp_attention(s.q.get(), s.k.get(), s.v.get(), s.q_positions.get(),
                                                      s.q_positions.get(), 1, 0.0, s.o.get(), s.lse.get()));
      }
      total += ms_since(start);
    }
  }
  comm.meet(comm.rank() != 0);
  if (alone != nullptr) dt_comm_destroy(alone);
  return total / a.iters;
}

Args parse(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  app->add_option("--seq", a.seq, "tokens in the whole sequence, a multiple of 2 * ranks (default 1024)")
      ->type_name("N")
      ->check(CLI::Range(2, 1 << 20));
  app->add_option("--heads", a.heads, "query heads (default 4)")->type_name("N")->check(CLI::Range(1, 1024));
  app->add_option("--kv-heads", a.kv_heads, "key/value heads, dividing --heads (default 4)")
      ->type_name("N")
      ->check(CLI::Range(1, 1024));
  app->add_option("--head-dim", a.head_dim, "head dimension (default 64)")->type_name("N")->check(CLI::Range(1, 4096));
  app->add_option("--iters", a.iters, "timed calls per figure (default 3)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000));
  app->add_flag("--backward", a.backward,
                "time forward and backward, the ring and the whole sequence alike; leaves out the\n"
                "forward's split into compute and transfers");
  std::string device = "cpu";
  app->add_option("--device", device,
                  "cpu (host memory, the default) or cuda (each rank's CUDA device; the ring and the\n"
                  "whole sequence only, as --backward)")
      ->type_name("WHERE")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  if (a.heads % a.kv_heads != 0) kCli.error("--kv-heads must divide --heads");
  a.cuda = device == "cuda";
  if (a.cuda && cuda_devices() == 0) {
    kCli.error("--device cuda: no CUDA device here, or a dtbench built without CUDA");
  }
  return a;
}

void print_table(const Args& a, int ranks, double full_ms, const std::vector<LayoutResult>& results) {
  std::printf("# causal ring attention %s, %d ranks, sequence %d, heads %d/%d, head dim %d, float32, %s\n",
              a.backward ? "forward + backward" : "forward", ranks, a.seq, a.heads, a.kv_heads, a.head_dim,
              a.cuda ? "CUDA" : "host memory");
  std::printf("# whole sequence on one rank (same kernel): %.2f ms\n", full_ms);
  if (!a.split()) {
    std::printf("%-11s %10s %9s %11s\n", "layout", "ring_ms", "speedup", "ring/whole");
    for (const LayoutResult& r : results) {
      std::printf("%-11s %10.2f %8.2fx %11.2f\n", r.layout, r.ring_ms, full_ms / r.ring_ms, r.ring_ms / full_ms);
    }
    return;
  }
  std::printf("%-11s %10s %9s %12s %12s %9s %9s %9s  %s\n", "layout", "ring_ms", "speedup", "compute_ms",
              "transfer_ms", "hidden", "balance", "work_bal", "compute_ms per rank");
  for (const LayoutResult& r : results) {
    std::string per_rank;
    for (double t : r.compute_ms) per_rank += (per_rank.empty() ? "" : " ") + std::to_string(t).substr(0, 7);
    std::printf("%-11s %10.2f %8.2fx %12.2f %12.3f %8.0f%% %9.2f %9.2f  %s\n", r.layout, r.ring_ms,
                full_ms / r.ring_ms, r.slowest_compute(), r.transfer_ms, 100 * r.hidden(), r.balance(),
                r.work_balance(), per_rank.c_str());
  }
}

int write_json(const Args& a, int ranks, double full_ms, const std::vector<LayoutResult>& results) {
  Json rows = Json::array();
  for (const LayoutResult& r : results) {
    if (!a.split()) {
      rows.push_back({{"layout", r.layout}, {"ring_ms", r.ring_ms}, {"speedup", full_ms / r.ring_ms}});
      continue;
    }
    rows.push_back({{"layout", r.layout},
                    {"ring_ms", r.ring_ms},
                    {"speedup", full_ms / r.ring_ms},
                    {"compute_ms", r.slowest_compute()},
                    {"transfer_ms", r.transfer_ms},
                    {"hidden_share", r.hidden()},
                    {"balance", r.balance()},
                    {"work_balance", r.work_balance()},
                    {"compute_ms_per_rank", r.compute_ms}});
  }
  const Json doc = {{"benchmark", "cp"}, {"ranks", ranks},         {"seq", a.seq},
                    {"heads", a.heads},  {"kv_heads", a.kv_heads}, {"head_dim", a.head_dim},
                    {"iters", a.iters},  {"causal", true},         {"backward", a.backward},
                    {"device", a.cuda ? "cuda" : "cpu"},
                    {"full_attention_ms", full_ms}, {"results", rows}};
  return write_results(kCli.command, a.json, doc) ? 0 : 1;
}

}  // namespace

int run_cp(int argc, char** argv) {
  const Args a = parse(argc, argv);
  Comm comm;
  if (a.seq % (2 * comm.size()) != 0) kCli.error("--seq must be a multiple of 2 * ranks");
  std::vector<LayoutResult> results;
  for (dt_cp_layout layout : {DT_CP_CONTIGUOUS, DT_CP_ZIGZAG}) results.push_back(measure(comm, a, layout));
  const double full_ms = full_attention_ms(comm, a);
  int status = 0;
  if (comm.rank() == 0) {
    print_table(a, comm.size(), full_ms, results);
    if (!a.json.empty()) status = write_json(a, comm.size(), full_ms, results);
  }
  comm.exit(status);
}

}  // namespace dtbench
