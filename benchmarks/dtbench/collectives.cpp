// The collectives sweep over libdtrain: for each operation and size, verify
// once, warm up, size the iteration count, then time between barriers.
#include "collectives.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench.h"
#include "comm.hpp"
#include "command_line.hpp"
#include "orchestrate.hpp"
#include "usage.hpp"

namespace dtbench {

namespace {

const char kUsage[] =
    "usage: dtbench collectives [options]\n"
    "       dtrun -n N dtbench collectives [options]\n"
    "       dtbench collectives --vs-mpi [-n N] [options]";

const char kDescription[] =
    "Times allreduce, allgather, reduce_scatter, alltoall and broadcast (and with\n"
    "--ops alltoallv, reduce, gather, scatter, allgatherv, reduce_scatterv) over the\n"
    "ranks of this job for sizes doubling from --min-bytes to --max-bytes, after\n"
    "checking each result. Rank 0 prints the table.\n"
    "\n"
    "Size: the buffer for allreduce, reduce and broadcast; the whole gathered or\n"
    "scattered buffer for allgather, gather, scatter and reduce_scatter; the whole\n"
    "send buffer for alltoall. Roots are rank 0. The uneven forms take their even\n"
    "operation's size and split it unevenly, rank r's piece about proportional to\n"
    "r + 1 (alltoallv: the block from s to d is piece (s + d) mod N).\n"
    "\n"
    "Back to back, a call finds its buffers in the caches and the ranks' progress\n"
    "engines awake. --evict times each call as a training step issues it: every\n"
    "rank first writes SIZE bytes of its own (the caches then hold those, as they\n"
    "hold a layer's activations and weights after its GEMMs), the ranks meet at a\n"
    "barrier, and the call is timed alone; a row is the median of --iters calls\n"
    "(default 20) on the slowest rank. tools/dtplan/calibrate.py fits the\n"
    "planner's link to such a sweep.";

const Usage kCli{"collectives", kUsage, kDescription};

// Calls timed per size with --evict unless --iters says otherwise.
constexpr int kEvictedCalls = 20;

struct Args {
  dtb_options options;
  std::string json;  // what options.json_path points to
  bool vs_mpi = false;
  int nproc = 2;
  int rounds = 1;
  std::string results_dir;
  std::int64_t evict_bytes = 0;  // 0: back to back
};

void parse(int argc, char** argv, Args& a) {
  dtb_options_init(&a.options);
  auto app = kCli.app();
  // The options the MPI peer shares: each value is read by the same code there.
  for (const dtb_option_info* info = dtb_option_table; info->name != nullptr; ++info) {
    const std::string name = info->name;
    app->add_option_function<std::string>(
           "--" + name,
           [&a, name](const std::string& value) {
             if (name == "json") {
               a.json = value;
             } else if (dtb_set_option(&a.options, name.c_str(), value.c_str()) != 0) {
               throw CLI::ValidationError(a.options.error);
             }
           },
           info->help)
        ->type_name(info->value_name);
  }
  app->add_flag("--vs-mpi", a.vs_mpi,
                "run this sweep under dtrun and the MPI peer under mpirun,\n"
                "both with N ranks, and print them side by side\n"
                "(start it as a single process, not under dtrun)");
  app->add_option("-n,--nproc", a.nproc, "ranks for --vs-mpi (default 2)")->type_name("N")->check(CLI::Range(1, 4096));
  app->add_option("--rounds", a.rounds,
                  "for --vs-mpi: alternate R libdtrain and R MPI sweeps\n"
                  "(dtrain, mpi, dtrain, mpi, ...) and report, for each\n"
                  "size and side, the round with the lowest time (default 1),\n"
                  "and the median, min and max over the rounds of the ratio\n"
                  "mpi time / dtrain time within a round; a shared machine's\n"
                  "speed changes in phases of seconds, and one sweep of each\n"
                  "may fall in a fast and a slow one")
      ->type_name("R")
      ->check(CLI::Range(1, 4096));
  app->add_option("--results-dir", a.results_dir,
                  "for --vs-mpi: write each run's results there and keep them:\n"
                  "dtrain-nN.json and mpi-nN.json, or dtrain-nN-rK.json and\n"
                  "mpi-nN-rK.json for round K (default: a temporary directory,\n"
                  "removed)")
      ->type_name("DIR");
  app->add_option_function<std::string>(
         "--evict",
         [&a](const std::string& value) {
           if (dtb_parse_bytes(value.c_str(), &a.evict_bytes) != 0 || a.evict_bytes <= 0) {
             throw CLI::ValidationError("--evict: '" + value + "' is no size (a number of bytes, K, M or G)");
           }
         },
         "time each call alone after every rank wrote SIZE bytes\n"
         "(caches cold as in a training step; see above)")
      ->type_name("SIZE");
  dtrain::command_line::parse(*app, argc, argv);
  if (!a.json.empty()) a.options.json_path = a.json.c_str();
  if (a.evict_bytes > 0 && a.vs_mpi) kCli.error("--evict is not for --vs-mpi: the MPI peer times back to back");
  if (a.evict_bytes > 0 && a.options.iters == 0) a.options.iters = kEvictedCalls;
  if (dtb_options_check(&a.options) != 0) kCli.error(a.options.error);
  if (a.rounds > 1 && !a.vs_mpi) kCli.error("--rounds is for --vs-mpi");
  if (!a.results_dir.empty() && !a.vs_mpi) kCli.error("--results-dir is for --vs-mpi");
}

// Buffers for one operation, sized for its largest size and reused by the
// smaller ones so that no size pays for fresh pages.
struct Buffers {
  Buffers(size_t send_bytes, size_t recv_bytes) : send(dtb_alloc(send_bytes)), recv(dtb_alloc(recv_bytes)) {}
  ~Buffers() {
    dtb_free(send);
    dtb_free(recv);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void* send;
  void* recv;
};

class Sweep {
 public:
  Sweep(Comm& comm, const dtb_options& o, std::int64_t evict_bytes, dtb_results& results)
      : comm_(comm),
        o_(o),
        results_(results),
        send_counts_(comm.size()),
        recv_counts_(comm.size()),
        evict_(static_cast<std::size_t>(evict_bytes)) {}

  void op(dtb_op op) {
    dtb_layout largest;
    if (dtb_layout_largest(op, o_.min_bytes, o_.max_bytes, comm_.size(), comm_.rank(), o_.dtype, &largest) != 0) {
      if (comm_.rank() == 0) {
        std::printf("#\n# %s: --max-bytes is too small for %d ranks\n", dtb_op_name(op), comm_.size());
      }
      return;
    }
    const size_t elem = dtb_dtype_size(o_.dtype);
    Buffers buffers(largest.send_elems * elem, largest.recv_elems * elem);
    if (comm_.rank() == 0) dtb_print_op_header(stdout, op);
    for (int64_t nominal = o_.min_bytes; nominal <= o_.max_bytes; nominal *= 2) {
      dtb_layout l;
      if (dtb_layout_for(op, nominal, comm_.size(), comm_.rank(), o_.dtype, &l) == 0) size(op, l, buffers);
      if (nominal > o_.max_bytes / 2) break;
    }
  }

 private:
  void size(dtb_op op, const dtb_layout& l, Buffers& b) {
    // The counts of an uneven operation are worked out here, not in the timed loop.
    dtb_counts(op, &l, comm_.rank(), comm_.size(), send_counts_.data(), recv_counts_.data());
    verify(op, l, b);
    for (int k = 0; k < o_.warmup; ++k) run(op, l, b);
    const int iters = dtb_iterations(o_.iters > 0 ? 0.0 : probe(op, l, b), o_.iters);
    const double slowest = comm_.max(evict_.empty() ? back_to_back(op, l, b, iters) : evicted(op, l, b, iters));

    dtb_row row{};
    row.op = op;
    row.bytes = l.bytes;
    row.count = l.bytes / static_cast<int64_t>(dtb_dtype_size(o_.dtype));
    row.iters = iters;
    row.time_s = slowest;
    dtb_results_add(&results_, row);
    if (comm_.rank() == 0) dtb_print_row(stdout, &results_, &results_.rows[results_.nrows - 1]);
  }

  // Seconds per call of `iters` calls in a row, on this rank.
  double back_to_back(dtb_op op, const dtb_layout& l, Buffers& b, int iters) {
    comm_.barrier();
    const double t0 = dtb_now();
    for (int k = 0; k < iters; ++k) run(op, l, b);
    return (dtb_now() - t0) / iters;
  }

  // The median seconds of `iters` calls each timed alone after this rank
  // wrote its eviction buffer, on this rank.
  double evicted(dtb_op op, const dtb_layout& l, Buffers& b, int iters) {
    std::vector<double> times(static_cast<std::size_t>(iters));
    for (int k = 0; k < iters; ++k) {
      std::memset(evict_.data(), k, evict_.size());
      comm_.barrier();
      const double t0 = dtb_now();
      run(op, l, b);
      times[static_cast<std::size_t>(k)] = dtb_now() - t0;
    }
    std::nth_element(times.begin(), times.begin() + iters / 2, times.end());
    return times[static_cast<std::size_t>(iters / 2)];
  }

  // Every rank checks its own result; if any is wrong, all stop.
  void verify(dtb_op op, const dtb_layout& l, Buffers& b) {
    dtb_fill(op, &l, comm_.rank(), comm_.size(), o_.dtype, b.send, b.recv);
    run(op, l, b);
    double got = 0, want = 0;
    int64_t wrong = dtb_check(op, &l, comm_.rank(), comm_.size(), o_.dtype, b.send, b.recv, &got, &want);
    if (wrong >= 0) {
      std::fprintf(stderr, "dtbench: rank %d: %s of %lld B (%s) is wrong: element %lld is %g, expected %g\n",
                   comm_.rank(), dtb_op_name(op), static_cast<long long>(l.bytes), dtb_dtype_name(o_.dtype),
                   static_cast<long long>(wrong), got, want);
    }
    if (comm_.max(wrong >= 0 ? 1.0 : 0.0) > 0) {
      if (comm_.rank() == 0) {
        std::fprintf(stderr, "dtbench: %s gave a wrong result at %lld B; stopping\n", dtb_op_name(op),
                     static_cast<long long>(l.bytes));
      }
      comm_.exit(1);
    }
  }

  // Seconds per iteration, agreed by all ranks: doubles the iteration count
  // until one round lasts DTB_PROBE_SECONDS on the slowest rank.
  double probe(dtb_op op, const dtb_layout& l, Buffers& b) {
    for (int k = 1;; k *= 2) {
      comm_.barrier();
      const double t0 = dtb_now();
      for (int j = 0; j < k; ++j) run(op, l, b);
      const double elapsed = comm_.max(dtb_now() - t0);
      if (elapsed >= DTB_PROBE_SECONDS || k >= DTB_MAX_ITERS) return elapsed / k;
    }
  }

  void run(dtb_op op, const dtb_layout& l, Buffers& b) {
    comm_.run(op, l, o_.dtype, b.send, b.recv, send_counts_.data(), recv_counts_.data());
  }

  Comm& comm_;
  const dtb_options& o_;
  dtb_results& results_;
  // The per-rank counts of the size being timed (dtb_counts).
  std::vector<int64_t> send_counts_;
  std::vector<int64_t> recv_counts_;
  std::vector<unsigned char> evict_;  // written before each call with --evict
};

}  // namespace

int run_collectives(int argc, char** argv) {
  Args args;
  parse(argc, argv, args);
  const dtb_options& o = args.options;
  Comm comm;

  if (args.vs_mpi) {
    if (comm.size() != 1) {
      if (comm.rank() == 0) {
        std::fprintf(stderr,
                     "dtbench: --vs-mpi starts dtrun and mpirun itself: run it as one process "
                     "(dtbench collectives --vs-mpi -n %d), or use benchmarks/run_collectives.sh\n",
                     comm.size());
      }
      comm.exit(2);
    }
    return orchestrate(o, args.nproc, args.rounds, args.results_dir);
  }

  dtb_results results{};
  results.implementation = "dtrain";
  results.library = dt_build_info();
  results.world = comm.size();
  results.dtype = o.dtype;
  results.evict_bytes = args.evict_bytes;
  // Rank 0 measures alone; the others keep off the cores meanwhile.
  if (comm.rank() == 0) results.memcpy_gbps = dtb_memcpy_gbps();
  comm.meet(comm.rank() != 0);

  if (comm.rank() == 0) {
    std::printf("# %s\n", dt_build_info());
    dtb_print_header(stdout, &results);
  }
  Sweep sweep(comm, o, args.evict_bytes, results);
  for (int op = 0; op < DTB_OP_COUNT; ++op) {
    if (o.ops & (1u << op)) sweep.op(static_cast<dtb_op>(op));
  }

  int status = 0;
  if (comm.rank() == 0 && o.json_path != nullptr) {
    if (dtb_write_json(o.json_path, &results) != 0) {
      std::fprintf(stderr, "dtbench: cannot write %s: %s\n", o.json_path, std::strerror(errno));
      status = 1;
    } else {
      std::printf("# results written to %s\n", o.json_path);
    }
  }
  dtb_results_free(&results);
  return status;
}

}  // namespace dtbench
