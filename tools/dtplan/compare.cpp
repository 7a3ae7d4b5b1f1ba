#include "compare.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace dtplan {

namespace {

struct Term {
  const char* name;
  double best;
  double other;
};

std::string line(const char* pattern, const char* name, double a, double b) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, pattern, name, a, b, b - a);
  return buffer;
}

}  // namespace

std::string explain(const dt_plan_estimate& best, const dt_plan_estimate& other) {
  const std::vector<Term> time{{"compute", best.time_compute, other.time_compute},
                               {"recompute", best.time_recompute, other.time_recompute},
                               {"pipeline bubble", best.time_bubble, other.time_bubble},
                               {"tp communication", best.time_tp, other.time_tp},
                               {"cp communication", best.time_cp, other.time_cp},
                               {"ep communication", best.time_ep, other.time_ep},
                               {"pp communication", best.time_pp, other.time_pp},
                               {"dp communication", best.time_dp, other.time_dp},
                               {"optimizer", best.time_optimizer, other.time_optimizer}};
  std::string out = "  term                   fastest (s)   compared (s)   difference (s)\n";
  for (const Term& t : time) out += line("  %-22s %12.3f %12.3f %+12.3f\n", t.name, t.best, t.other);
  out += line("  %-22s %12.3f %12.3f %+12.3f\n", "step", best.time_step, other.time_step);
  out += line("  %-22s %12.1f %12.1f %+12.1f\n", "memory per GPU (GB)", static_cast<double>(best.mem_total) / 1e9,
              static_cast<double>(other.mem_total) / 1e9);
  std::vector<Term> sorted = time;
  std::sort(sorted.begin(), sorted.end(),
            [](const Term& a, const Term& b) { return a.other - a.best > b.other - b.best; });
  out += "  why it is slower:";
  int said = 0;
  for (const Term& t : sorted) {
    if (t.other - t.best <= 0.005 * best.time_step || said == 3) break;
    char buffer[128];
    std::snprintf(buffer, sizeof buffer, "%s %.3f s more in %s", said ? ";" : "", t.other - t.best, t.name);
    out += buffer;
    ++said;
  }
  if (said == 0) out += " it is not: the difference is within 0.5 % per term";
  return out + "\n";
}

}  // namespace dtplan
