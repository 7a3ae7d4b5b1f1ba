#include <cstdio>
#include <sstream>

#include "plan/report.hpp"

namespace dtrain::plan {

const char* schedule_name(Schedule schedule) {
  switch (schedule) {
    case Schedule::gpipe:
      return "gpipe";
    case Schedule::one_f_one_b:
      return "1f1b";
    case Schedule::interleaved:
      return "interleaved";
    case Schedule::zb_h1:
      return "zb_h1";
  }
  return "?";
}

const char* recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::none:
      return "none";
    case Recompute::selective:
      return "selective";
    case Recompute::full:
      return "full";
  }
  return "?";
}

std::string describe(const Config& c) {
  std::ostringstream s;
  s << "dp=" << c.dp << " tp=" << c.tp << " pp=" << c.pp << " cp=" << c.cp << " ep=" << c.ep << " zero=" << c.zero_stage
    << " " << schedule_name(c.schedule);
  if (c.schedule == Schedule::interleaved) s << "(v=" << c.virtual_stages << ")";
  s << " mb=" << c.micro_batch << " recompute=" << recompute_name(c.recompute);
  return s.str();
}

namespace {

std::string format(const char* pattern, double a) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, a);
  return buffer;
}

std::string gb(std::int64_t bytes) { return format("%.1f", static_cast<double>(bytes) / 1e9); }

std::size_t shown(const Plan& plan, std::size_t top) {
  return top == 0 || top > plan.ranked.size() ? plan.ranked.size() : top;
}

}  // namespace

std::string table(const Plan& plan, std::size_t top) {
  std::ostringstream s;
  s << "model: " << total_parameters(plan.model) / 1e9 << "B parameters; cluster: " << plan.cluster.gpus() << " GPUs ("
    << plan.cluster.nodes << " x " << plan.cluster.gpus_per_node << "); global batch " << plan.options.global_batch
    << "\n";
  s << plan.evaluated << " configurations evaluated in " << format("%.3f", plan.seconds) << " s: " << plan.feasible
    << " feasible\n\n";
  char line[512];
  std::snprintf(line, sizeof line,
                "%4s %5s %4s %4s %3s %3s %2s %-16s %3s %-9s | %6s %6s %6s %6s %6s %6s | %8s %7s %7s %7s %7s %7s %7s "
                "%7s | %5s %7s\n",
                "rank", "dp", "tp", "pp", "cp", "ep", "z", "schedule", "mb", "recompute", "params", "grads", "optim",
                "master", "act", "total", "step s", "compute", "recomp", "bubble", "tp", "cp+ep", "pp", "dp", "MFU",
                "TFLOP/s");
  s << line;
  s << std::string(std::string(line).size() - 1, '-') << "\n";
  for (std::size_t i = 0; i < shown(plan, top); ++i) {
    const Estimate& e = plan.ranked[i];
    const Config& c = e.config;
    std::string schedule = c.pp == 1 ? "-" : schedule_name(c.schedule);
    if (c.schedule == Schedule::interleaved) schedule += "(v=" + std::to_string(c.virtual_stages) + ")";
    std::snprintf(line, sizeof line,
                  "%4zu %5d %4d %4d %3d %3d %2d %-16s %3lld %-9s | %6s %6s %6s %6s %6s %6s | %8.3f %7.3f %7.3f %7.3f "
                  "%7.3f %7.3f %7.3f %7.3f | %4.1f%% %7.1f\n",
                  i + 1, c.dp, c.tp, c.pp, c.cp, c.ep, c.zero_stage, schedule.c_str(),
                  static_cast<long long>(c.micro_batch), recompute_name(c.recompute), gb(e.memory.parameters).c_str(),
                  gb(e.memory.gradients).c_str(), gb(e.memory.optimizer_state).c_str(),
                  gb(e.memory.master_weights).c_str(), gb(e.memory.activations).c_str(), gb(e.memory.total).c_str(),
                  e.time.step, e.time.compute, e.time.recompute, e.time.bubble, e.time.tp, e.time.cp + e.time.ep,
                  e.time.pp, e.time.dp, e.mfu * 100, e.tflops_per_gpu);
    s << line;
  }
  s << "\nmemory in GB per GPU (the heaviest pipeline stage); time in seconds per step\n";
  bool any = false;
  for (std::size_t r = 1; r < plan.rejected.size(); ++r) {
    const Rejections& rej = plan.rejected[r];
    if (rej.count == 0) continue;
    if (!any) s << "\nrejected:\n";
    any = true;
    s << "  " << rej.count << " for " << reason_name(static_cast<Reason>(r)) << ", e.g. " << describe(rej.example)
      << ": " << rej.message << "\n";
  }
  return s.str();
}

}  // namespace dtrain::plan
