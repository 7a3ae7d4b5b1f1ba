// dtplan: plans the parallelism of a transformer's training on a cluster
// (dtrain/plan.h) and prints the ranked configurations, their memory and
// time breakdowns, and why the others were rejected.
#include <dtrain.h>

#include <cstdio>
#include <cstdlib>

#include "arguments.hpp"
#include "compare.hpp"

namespace {

void check(dt_status status, const char* what) {
  if (status == DT_OK) return;
  std::fprintf(stderr, "dtplan: %s: %s\n", what, dt_error_last());
  std::exit(1);
}

void write(const dt_plan* plan, const std::string& path, dt_plan_format format, int top) {
  if (path.empty()) return;
  check(dt_plan_write(plan, path.c_str(), format, static_cast<size_t>(top)), path.c_str());
  std::printf("wrote %s\n", path.c_str());
}

void compare(const dtplan::Arguments& a, const dt_plan* plan) {
  const dt_plan_config config = dtplan::parse_config(a.compare);
  dt_plan_estimate other = DT_PLAN_ESTIMATE_INIT;
  const dt_status status = dt_plan_evaluate(&a.model, &a.cluster, &a.options, &config, &other);
  std::printf("\n%s:\n", a.compare.c_str());
  if (status != DT_OK) {
    std::printf("  %s\n", dt_error_last());
    if (other.reason != DT_PLAN_REJECT_MEMORY) return;
  }
  dt_plan_summary summary = DT_PLAN_SUMMARY_INIT;
  check(dt_plan_info(plan, &summary), "plan");
  if (summary.kept == 0) return;
  dt_plan_estimate best = DT_PLAN_ESTIMATE_INIT;
  check(dt_plan_ranked(plan, 0, &best), "plan");
  std::printf("%s", dtplan::explain(best, other).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const dtplan::Arguments a = dtplan::parse(argc, argv);
  dt_plan* plan = nullptr;
  check(dt_plan_create(&plan, &a.model, &a.cluster, &a.options), "plan");
  std::fflush(stdout);
  check(dt_plan_write(plan, "-", DT_PLAN_TABLE, static_cast<size_t>(a.top)), "table");
  write(plan, a.json, DT_PLAN_JSON, a.top);
  write(plan, a.svg, DT_PLAN_SVG, a.top);
  if (!a.compare.empty()) compare(a, plan);
  dt_plan_destroy(plan);
  return 0;
}
