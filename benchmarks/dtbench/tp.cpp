// dtbench tp. A Megatron MLP block, y = W2 gelu(W1 x + b1) + b2, forward and
// backward (every weight's and the input's gradient, for a fixed upstream
// gradient), with W1 split by rows (dt_tp_column_linear_*) and W2 by columns
// (dt_tp_row_linear_*) over this job's ranks, f32, measured four ways, each
// the mean of --iters steps started together after a barrier:
//   step      the block over the job's ranks (the slowest rank's time)
//   compute   on each rank, the same calls on a communicator of its own
//             (no communication): the rank's share of the work
//   comm      the block's collectives alone, on buffers of their size: two
//             allreduces of [T, H], or with --sequence-parallel the three
//             allgathers and two reduce-scatters of [T/tp, H] pieces
//   whole     rank 0 alone, the whole block (tp = 1) on one rank
// speed-up = whole / step; hidden share = (compute + comm - step) / comm,
// clamped to [0, 1]: the part of the collectives the step did not wait for
// (the column-parallel backward reduces dx while it computes dW). A step
// does 12 T H F / tp floating-point operations per rank (six GEMMs); GFLOP/s
// per rank are given for the step and for the compute alone, the latter
// against one core's peak (cpu_peak.hpp).
#include "tp.hpp"

#include <dtrain.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm.hpp"
#include "command_line.hpp"
#include "cpu_peak.hpp"
#include "gelu.hpp"
#include "host_tensor.hpp"
#include "timing.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const Usage kCli{"tp", "usage: dtrun -n N dtbench tp [options]",
                 "Times a transformer MLP block (column-parallel linear, GELU, row-parallel linear),\n"
                 "forward and backward, tensor-parallel over the job's ranks: the step, each rank's\n"
                 "compute alone, the block's collectives alone and the share of them hidden, and\n"
                 "the whole block on one rank (tp = 1). f32, one BLAS thread per rank unless\n"
                 "DTRAIN_BLAS_THREADS says otherwise. Rank 0 prints."};

struct Args {
  int tokens = 2048;
  int hidden = 1024;
  int ffn = 4096;
  bool sequence_parallel = false;
  int iters = 3;
  std::string json;
};

// One rank's block: its shards of the weights over `tp` ranks, its
// activations, and their gradients. `rows` is T, or T / tp with sequence
// parallelism.
struct Block {
  HostTensor<float> x, w1, b1, h, a, w2, b2, y, dy, da, dh, dx, dw1, db1, dw2, db2;
  unsigned flags;

  Block(const Args& args, int tp, std::int64_t rows, unsigned block_flags)
      : x({rows, args.hidden}), w1({args.ffn / tp, args.hidden}), b1({args.ffn / tp}),
        h({args.tokens, args.ffn / tp}), a({args.tokens, args.ffn / tp}), w2({args.hidden, args.ffn / tp}),
        b2({args.hidden}), y({rows, args.hidden}), dy({rows, args.hidden}), da({args.tokens, args.ffn / tp}),
        dh({args.tokens, args.ffn / tp}), dx({rows, args.hidden}), dw1({args.ffn / tp, args.hidden}),
        db1({args.ffn / tp}), dw2({args.hidden, args.ffn / tp}), db2({args.hidden}), flags(block_flags) {
    // Only the time is measured, but moderate values keep GELU and the
    // GEMMs on their ordinary paths (no denormals, no overflow).
    const float w_scale = 1.0F / std::sqrt(static_cast<float>(args.hidden));
    x.fill_uniform(1, 1.0F);
    w1.fill_uniform(2, w_scale);
    b1.fill_uniform(3, 0.1F);
    w2.fill_uniform(4, w_scale);
    b2.fill_uniform(5, 0.1F);
    dy.fill_uniform(6, 1.0F);
  }

  void step(Comm& comm, dt_comm* tp) {
    comm.check("dt_tp_column_linear_forward",
               dt_tp_column_linear_forward(tp, x.get(), w1.get(), b1.get(), h.get(), flags));
    gelu_forward(h.data().data(), a.data().data(), h.data().size());
    comm.check("dt_tp_row_linear_forward", dt_tp_row_linear_forward(tp, a.get(), w2.get(), b2.get(), y.get(), flags));
    comm.check("dt_tp_row_linear_backward",
               dt_tp_row_linear_backward(tp, a.get(), w2.get(), dy.get(), da.get(), dw2.get(), db2.get(), flags));
    gelu_backward(h.data().data(), da.data().data(), dh.data().data(), dh.data().size());
    comm.check("dt_tp_column_linear_backward", dt_tp_column_linear_backward(tp, x.get(), w1.get(), dh.get(), dx.get(),
                                                                            dw1.get(), db1.get(), flags));
  }
};

// The block's collectives alone, on buffers of their sizes.
void collectives_alone(Comm& comm, const Args& args, std::vector<float>& whole, std::vector<float>& piece) {
  std::int64_t whole_shape[] = {args.tokens, args.hidden};
  std::int64_t piece_shape[] = {args.tokens / comm.size(), args.hidden};
  DLTensor w{whole.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, whole_shape, nullptr, 0};
  DLTensor p{piece.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, piece_shape, nullptr, 0};
  if (!args.sequence_parallel) {
    for (int i = 0; i < 2; ++i) comm.check("dt_allreduce", dt_allreduce(comm.handle(), &w, &w, DT_SUM, nullptr, nullptr));
    return;
  }
  // Forward: gather x, reduce-scatter y. Backward: gather dy, gather x
  // again, reduce-scatter dx.
  comm.check("dt_allgather", dt_allgather(comm.handle(), &p, &w, nullptr, nullptr));
  comm.check("dt_reduce_scatter", dt_reduce_scatter(comm.handle(), &w, &p, DT_SUM, nullptr, nullptr));
  for (int i = 0; i < 2; ++i) comm.check("dt_allgather", dt_allgather(comm.handle(), &p, &w, nullptr, nullptr));
  comm.check("dt_reduce_scatter", dt_reduce_scatter(comm.handle(), &w, &p, DT_SUM, nullptr, nullptr));
}

struct Result {
  double step_ms = 0;     // slowest rank
  double compute_ms = 0;  // slowest rank
  double comm_ms = 0;     // slowest rank
  double whole_ms = 0;    // rank 0, tp = 1
  double flops_per_rank = 0;
  double peak_gflops = 0;  // one core

  double hidden() const {
    if (comm_ms <= 0) return 0;
    return std::clamp((compute_ms + comm_ms - step_ms) / comm_ms, 0.0, 1.0);
  }
  double step_gflops() const { return flops_per_rank / step_ms / 1e6; }
  double compute_gflops() const { return flops_per_rank / compute_ms / 1e6; }
};

Result measure(Comm& comm, const Args& args) {
  const int tp = comm.size();
  Result r;
  r.flops_per_rank = 12.0 * args.tokens * args.hidden * static_cast<double>(args.ffn) / tp;
  dt_comm* alone = nullptr;  // this rank by itself
  comm.check("dt_comm_split", dt_comm_split(&alone, comm.handle(), comm.rank(), 0));

  const unsigned flags = args.sequence_parallel ? DT_TP_SEQUENCE_PARALLEL : 0;
  {
    Block block(args, tp, args.sequence_parallel ? args.tokens / tp : args.tokens, flags);
    block.step(comm, comm.handle());  // warm-up: pages touched, BLAS buffers allocated
    r.step_ms = comm.max(mean_ms(comm, args.iters, [&] { block.step(comm, comm.handle()); }));
  }
  {
    Block local(args, tp, args.tokens, 0);
    local.step(comm, alone);
    r.compute_ms = comm.max(mean_ms(comm, args.iters, [&] { local.step(comm, alone); }));
  }
  {
    std::vector<float> whole(static_cast<std::size_t>(args.tokens) * static_cast<std::size_t>(args.hidden));
    std::vector<float> piece(whole.size() / static_cast<std::size_t>(tp));
    collectives_alone(comm, args, whole, piece);
    r.comm_ms = comm.max(mean_ms(comm, args.iters, [&] { collectives_alone(comm, args, whole, piece); }));
  }
  if (comm.rank() == 0) {
    Block whole(args, 1, args.tokens, 0);
    whole.step(comm, alone);
    double total = 0;
    for (int i = 0; i < args.iters; ++i) {
      const auto start = Clock::now();
      whole.step(comm, alone);
      total += ms_since(start);
    }
    r.whole_ms = total / args.iters;
    r.peak_gflops = cpu_peak(0).gflops(1);
    comm.meet(false);
  } else {
    comm.meet(true);
  }
  comm.check("dt_comm_destroy", dt_comm_destroy(alone));
  return r;
}

Args parse(int argc, char** argv) {
  Args a;
  auto app = kCli.app();
  app->add_option("--tokens", a.tokens, "rows of the activations, T (default 2048)")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 20));
  app->add_option("--hidden", a.hidden, "model width, H (default 1024)")->type_name("N")->check(CLI::Range(1, 1 << 16));
  app->add_option("--ffn", a.ffn, "MLP width, F, a multiple of the ranks (default 4096)")
      ->type_name("N")
      ->check(CLI::Range(1, 1 << 18));
  app->add_flag("--sequence-parallel", a.sequence_parallel,
                "activations outside the block split by rows (T a multiple of the\n"
                "ranks): allgathers and reduce-scatters instead of allreduces");
  app->add_option("--iters", a.iters, "timed steps per figure (default 3)")
      ->type_name("N")
      ->check(CLI::Range(1, 1000000));
  app->add_option("--json", a.json, "also write the results as JSON")->type_name("PATH");
  dtrain::command_line::parse(*app, argc, argv);
  return a;
}

void print_table(const Args& a, int ranks, const Result& r) {
  std::printf("# MLP block forward + backward, %d -> %d -> %d, %d tokens, float32, tp = %d%s\n", a.hidden, a.ffn,
              a.hidden, a.tokens, ranks, a.sequence_parallel ? ", sequence parallel" : "");
  std::printf("%10s %10s %9s %12s %10s %8s %12s %15s %10s\n", "whole_ms", "step_ms", "speedup", "compute_ms",
              "comm_ms", "hidden", "step_gflops", "compute_gflops", "peak_gflops");
  std::printf("%10.2f %10.2f %8.2fx %12.2f %10.2f %7.0f%% %12.1f %15.1f %10.1f\n", r.whole_ms, r.step_ms,
              r.whole_ms / r.step_ms, r.compute_ms, r.comm_ms, 100 * r.hidden(), r.step_gflops(), r.compute_gflops(),
              r.peak_gflops);
  std::printf("# GFLOP/s per rank (12 T H F / tp a step); compute: the rank's calls on a communicator of its own;\n"
              "# peak: one core (dtbench gemm measures the GEMM's own rate against it)\n");
}

int write_json(const Args& a, int ranks, const Result& r) {
  const Json doc = {{"benchmark", "tp"},
                    {"ranks", ranks},
                    {"tokens", a.tokens},
                    {"hidden", a.hidden},
                    {"ffn", a.ffn},
                    {"sequence_parallel", a.sequence_parallel},
                    {"iters", a.iters},
                    {"dtype", "float32"},
                    {"whole_ms", r.whole_ms},
                    {"step_ms", r.step_ms},
                    {"speedup", r.whole_ms / r.step_ms},
                    {"compute_ms", r.compute_ms},
                    {"comm_ms", r.comm_ms},
                    {"hidden_share", r.hidden()},
                    {"flops_per_rank", std::llround(r.flops_per_rank)},
                    {"step_gflops_per_rank", r.step_gflops()},
                    {"compute_gflops_per_rank", r.compute_gflops()},
                    {"peak_gflops_per_core", r.peak_gflops}};
  return write_results(kCli.command, a.json, doc) ? 0 : 1;
}

}  // namespace

int run_tp(int argc, char** argv) {
  const Args a = parse(argc, argv);
  Comm comm;
  if (a.ffn % comm.size() != 0) kCli.error("--ffn must be a multiple of the ranks");
  if (a.sequence_parallel && a.tokens % comm.size() != 0) {
    kCli.error("--tokens must be a multiple of the ranks with --sequence-parallel");
  }
  const Result r = measure(comm, a);
  int status = 0;
  if (comm.rank() == 0) {
    print_table(a, comm.size(), r);
    if (!a.json.empty()) status = write_json(a, comm.size(), r);
  }
  comm.exit(status);
}

}  // namespace dtbench
