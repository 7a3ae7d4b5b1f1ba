#include "plan/search.hpp"

#include <algorithm>
#include <chrono>

#include "base/error.hpp"

namespace dtrain::plan {

namespace {

// The sizes a dimension may take: the divisors of n, or 1 when not searched.
std::vector<int> sizes(std::int64_t n, unsigned dimensions, Dimension dimension) {
  std::vector<int> d;
  if ((dimensions >> static_cast<int>(dimension) & 1u) == 0) return {1};
  for (std::int64_t k = 1; k <= n; ++k) {
    if (n % k == 0) d.push_back(static_cast<int>(k));
  }
  return d;
}

bool allowed(unsigned mask, int bit) { return (mask >> bit & 1u) != 0; }

// Collects verdicts; keeps the fastest estimates, trimming as it goes so
// that a search of millions of variants holds only a few times `keep`.
class Collector {
 public:
  explicit Collector(Plan& plan) : plan_(plan) {}

  void add(const Verdict& verdict, const Config& config, const Estimate& estimate) {
    ++plan_.evaluated;
    if (!verdict.accepted()) {
      Rejections& r = plan_.rejected[static_cast<std::size_t>(verdict.reason)];
      if (r.count++ == 0) {
        r.example = config;
        r.message = verdict.message;
      }
      return;
    }
    ++plan_.feasible;
    plan_.ranked.push_back(estimate);
    if (plan_.ranked.size() >= 2 * plan_.options.keep + 64) trim();
  }

  void trim() {
    auto faster = [](const Estimate& a, const Estimate& b) { return a.time.step < b.time.step; };
    const std::size_t keep = std::min(plan_.options.keep, plan_.ranked.size());
    std::partial_sort(plan_.ranked.begin(), plan_.ranked.begin() + static_cast<std::ptrdiff_t>(keep),
                      plan_.ranked.end(), faster);
    plan_.ranked.resize(keep);
  }

 private:
  Plan& plan_;
};

// Every variant of one accepted mesh shape.
void variants(const Plan& plan, Config config, Collector& collector) {
  const Transformer& t = plan.model;
  const Options& o = plan.options;
  const std::int64_t per_replica = o.global_batch / (std::int64_t{config.dp} * config.ep);
  for (int stage = 0; stage <= 3; ++stage) {
    if (!allowed(o.zero_stages, stage)) continue;
    config.zero_stage = stage;
    const StageStates states = stage_states(t, config);
    // Without a pipeline the schedule means nothing: 1F1B stands for all.
    std::vector<std::pair<Schedule, int>> schedules;
    if (config.pp == 1) {
      schedules.emplace_back(Schedule::one_f_one_b, 1);
    } else {
      if (allowed(o.schedules, static_cast<int>(Schedule::gpipe))) schedules.emplace_back(Schedule::gpipe, 1);
      if (allowed(o.schedules, static_cast<int>(Schedule::one_f_one_b))) {
        schedules.emplace_back(Schedule::one_f_one_b, 1);
      }
      if (allowed(o.schedules, static_cast<int>(Schedule::interleaved))) {
        for (int v = 2; v <= o.max_virtual_stages; ++v) schedules.emplace_back(Schedule::interleaved, v);
      }
      if (allowed(o.schedules, static_cast<int>(Schedule::zb_h1))) schedules.emplace_back(Schedule::zb_h1, 1);
    }
    for (const auto& [schedule, v] : schedules) {
      config.schedule = schedule;
      config.virtual_stages = v;
      for (int r = 0; r <= 2; ++r) {
        if (!allowed(o.recompute, r)) continue;
        config.recompute = static_cast<Recompute>(r);
        for (std::int64_t b = 1; b <= std::min(o.max_micro_batch, std::max<std::int64_t>(per_replica, 1)); ++b) {
          config.micro_batch = b;
          Estimate estimate;
          const Verdict verdict = evaluate_variant(t, plan.cluster, o, config, states, estimate);
          // Sizes that do not divide the batch are not variants at all.
          if (verdict.reason == Reason::batch && b > 1) continue;
          collector.add(verdict, config, estimate);
        }
      }
    }
  }
}

}  // namespace

void check(const Options& o) {
  if (o.global_batch < 1) raise(DT_ERR_INVALID_ARGUMENT, "options.global_batch must be >= 1");
  if (o.max_micro_batch < 1) raise(DT_ERR_INVALID_ARGUMENT, "options.max_micro_batch must be >= 1");
  if (o.max_virtual_stages < 1) raise(DT_ERR_INVALID_ARGUMENT, "options.max_virtual_stages must be >= 1");
  if (!(o.memory_fraction > 0 && o.memory_fraction <= 1)) {
    raise(DT_ERR_INVALID_ARGUMENT, "options.memory_fraction must be in (0, 1]");
  }
  if ((o.zero_stages & 0xFu) == 0) raise(DT_ERR_INVALID_ARGUMENT, "options.zero_stages allows no stage (bits 0-3)");
  if ((o.recompute & 0x7u) == 0) raise(DT_ERR_INVALID_ARGUMENT, "options.recompute allows nothing (bits 0-2)");
  if ((o.schedules & 0xFu) == 0) raise(DT_ERR_INVALID_ARGUMENT, "options.schedules allows no schedule (bits 0-3)");
  if (o.keep < 1) raise(DT_ERR_INVALID_ARGUMENT, "options.keep must be >= 1");
}

Plan search(const Transformer& t, const Cluster& c, const Options& options) {
  check(t);
  check(c);
  check(options);
  const auto start = std::chrono::steady_clock::now();
  Plan plan;
  plan.model = t;
  plan.cluster = c;
  plan.options = options;
  Collector collector(plan);
  const std::int64_t n = c.gpus();
  const unsigned dims = options.dimensions;
  for (int tp : sizes(n, dims, Dimension::tp)) {
    for (int cp : sizes(n / tp, dims, Dimension::cp)) {
      for (int ep : sizes(n / tp / cp, dims, Dimension::ep)) {
        for (int pp : sizes(n / tp / cp / ep, dims, Dimension::pp)) {
          Config config;
          config.tp = tp;
          config.cp = cp;
          config.ep = ep;
          config.pp = pp;
          config.dp = static_cast<int>(n / tp / cp / ep / pp);
          const Verdict shape = check_shape(t, c, config);
          if (!shape.accepted()) {
            collector.add(shape, config, Estimate{});
            continue;
          }
          variants(plan, config, collector);
        }
      }
    }
  }
  collector.trim();
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace dtrain::plan
