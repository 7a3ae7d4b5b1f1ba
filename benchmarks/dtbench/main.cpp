// dtbench: libdtrain's benchmarks. Each benchmark is a subcommand.
#include <cstdio>
#include <cstring>

#include "checks.hpp"
#include "collectives.hpp"
#include "compare.hpp"
#include "cp.hpp"
#include "ddp.hpp"
#include "gemm.hpp"
#include "handoff.hpp"
#include "kernels.hpp"
#include "moe.hpp"
#include "pipeline.hpp"
#include "predict.hpp"
#include "tp.hpp"
#include "zero.hpp"

namespace {

const char kUsage[] =
    "usage: dtbench COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  checks        the cost of comparing each collective's call across the ranks\n"
    "                (DTRAIN_CHECK_COLLECTIVES) on a small allreduce (dtrun -n N dtbench checks)\n"
    "  collectives   time libdtrain's collectives over this job's ranks\n"
    "                (dtrun -n N dtbench collectives; see dtbench collectives --help)\n"
    "  compare       print two results files side by side with their ratios\n"
    "  cp            time causal ring attention against one rank, the share of its\n"
    "                transfers hidden and each rank's share of the work, contiguous and\n"
    "                zigzag (dtrun -n N dtbench cp)\n"
    "  ddp           time training steps of the example MLP with DDP and the share of\n"
    "                the allreduce hidden behind backward (dtrun -n N dtbench ddp)\n"
    "  gemm          libdtrain's GEMM on the CPU against OpenBLAS called directly and\n"
    "                the CPU's peak, and on a CUDA device where there is one (one process)\n"
    "  handoff       handing bytes between two CPUs through shared memory, through the\n"
    "                cache or streamed around it (one process)\n"
    "  kernels       the bandwidth of libdtrain's CUDA kernels against a device-to-device\n"
    "                copy (one process; skipped without a CUDA device)\n"
    "  moe           an MoE layer's dispatch and combine against raw all-to-allv of the\n"
    "                same bytes (dtrun -n N dtbench moe)\n"
    "  pipeline      the bubble of the pipeline executor's schedules with busy-wait stage\n"
    "                work, against their closed forms (dtrun -n P dtbench pipeline)\n"
    "  predict       the planner's step times for the runs of ddp, zero, tp and pipeline\n"
    "                on a cluster file, beside the measured ones (one process)\n"
    "  tp            time a tensor-parallel MLP block forward and backward against one\n"
    "                rank, each rank's compute and collectives alone, and its GFLOP/s\n"
    "                (dtrun -n N dtbench tp)\n"
    "  zero          time training steps of the example MLP with ZeRO stages 0-3 and\n"
    "                compare each rank's memory with the ZeRO formulas (dtrun -n N dtbench zero)\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "checks") == 0) return dtbench::run_checks(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "collectives") == 0) return dtbench::run_collectives(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "compare") == 0) return dtbench::run_compare(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "gemm") == 0) return dtbench::run_gemm(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "cp") == 0) return dtbench::run_cp(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "handoff") == 0) return dtbench::run_handoff(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "kernels") == 0) return dtbench::run_kernels(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "moe") == 0) return dtbench::run_moe(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "pipeline") == 0) return dtbench::run_pipeline(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "predict") == 0) return dtbench::run_predict(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "tp") == 0) return dtbench::run_tp(argc - 1, argv + 1);
  bool ddp = std::strcmp(argv[1], "ddp") == 0;
  if (ddp || std::strcmp(argv[1], "zero") == 0) {
#ifdef DTBENCH_WITH_TRAINING
    return ddp ? dtbench::run_ddp(argc - 1, argv + 1) : dtbench::run_zero(argc - 1, argv + 1);
#else
    std::fprintf(stderr, "dtbench %s: not built (the example model needs OpenBLAS: pkg-config openblas)\n", argv[1]);
    return 2;
#endif
  }
  std::fprintf(stderr, "dtbench: unknown command '%s'\n\n%s", argv[1], kUsage);
  return 2;
}
