// dtbench: libdtrain's benchmarks. Each benchmark is a subcommand.
#include <cstdio>
#include <string>
#include <vector>

#include "checks.hpp"
#include "collectives.hpp"
#include "command_line.hpp"
#include "compare.hpp"
#include "cp.hpp"
#include "ddp.hpp"
#include "gemm.hpp"
#include "halfconv.hpp"
#include "handoff.hpp"
#include "kernels.hpp"
#include "moe.hpp"
#include "pipeline.hpp"
#include "predict.hpp"
#include "tp.hpp"
#include "zero.hpp"

namespace {

#ifndef DTBENCH_WITH_TRAINING
// dtbench ddp and dtbench zero train the example model, built only with OpenBLAS.
int not_built(int, char** argv) {
  std::fprintf(stderr, "dtbench %s: not built (the example model needs OpenBLAS: pkg-config openblas)\n", argv[0]);
  return 2;
}
const auto run_ddp = not_built;
const auto run_zero = not_built;
#else
using dtbench::run_ddp;
using dtbench::run_zero;
#endif

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);  // argv[0] is the command's name
  const char* help;
};

const Command kCommands[] = {
    {"checks", dtbench::run_checks,
     "the cost of comparing each collective's call across the ranks\n"
     "(DTRAIN_CHECK_COLLECTIVES) on a small allreduce (dtrun -n N dtbench checks)"},
    {"collectives", dtbench::run_collectives,
     "time libdtrain's collectives over this job's ranks\n"
     "(dtrun -n N dtbench collectives; see dtbench collectives --help)"},
    {"compare", dtbench::run_compare, "print two results files side by side with their ratios"},
    {"cp", dtbench::run_cp,
     "time causal ring attention against one rank, the share of its\n"
     "transfers hidden and each rank's share of the work, contiguous and\n"
     "zigzag (dtrun -n N dtbench cp)"},
    {"ddp", run_ddp,
     "time training steps of the example MLP with DDP and the share of\n"
     "the allreduce hidden behind backward (dtrun -n N dtbench ddp)"},
    {"gemm", dtbench::run_gemm,
     "libdtrain's GEMM on the CPU against OpenBLAS called directly and\n"
     "the CPU's peak, and on a CUDA device where there is one (one process)"},
    {"halfconv", dtbench::run_halfconv,
     "f16 <-> f32 array conversions, the portable loops against F16C\n"
     "(one process)"},
    {"handoff", dtbench::run_handoff,
     "handing bytes between two CPUs through shared memory, through the\n"
     "cache or streamed around it (one process)"},
    {"kernels", dtbench::run_kernels,
     "the bandwidth of libdtrain's CUDA kernels against a device-to-device\n"
     "copy (one process; skipped without a CUDA device)"},
    {"moe", dtbench::run_moe,
     "an MoE layer's dispatch and combine against raw all-to-allv of the\n"
     "same bytes (dtrun -n N dtbench moe)"},
    {"pipeline", dtbench::run_pipeline,
     "the bubble of the pipeline executor's schedules with busy-wait stage\n"
     "work, against their closed forms (dtrun -n P dtbench pipeline)"},
    {"predict", dtbench::run_predict,
     "the planner's step times for the runs of ddp, zero, tp and pipeline\n"
     "on a cluster file, beside the measured ones (one process)"},
    {"tp", dtbench::run_tp,
     "time a tensor-parallel MLP block forward and backward against one\n"
     "rank, each rank's compute and collectives alone, and its GFLOP/s\n"
     "(dtrun -n N dtbench tp)"},
    {"zero", run_zero,
     "time training steps of the example MLP with ZeRO stages 0-3 and\n"
     "compare each rank's memory with the ZeRO formulas (dtrun -n N dtbench zero)"}};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("libdtrain's benchmarks, one command each; dtbench COMMAND --help lists its options.", "dtbench");
  dtrain::command_line::set_usage(app, "usage: dtbench COMMAND [options]");
  for (const Command& command : kCommands) {
    // The command reads its own options: everything after its name is left to it.
    app.add_subcommand(command.name, command.help)->prefix_command()->set_help_flag();
  }
  dtrain::command_line::parse(app, argc, argv);
  for (const Command& command : kCommands) {
    const CLI::App* chosen = app.get_subcommand(command.name);
    if (chosen->parsed()) {
      std::vector<std::string> words = chosen->remaining();
      words.insert(words.begin(), command.name);
      std::vector<char*> args;
      for (std::string& word : words) args.push_back(word.data());
      args.push_back(nullptr);
      return command.run(static_cast<int>(words.size()), args.data());
    }
  }
  dtrain::command_line::fail(app, "a COMMAND is required");
}
