// Megatron-LM 2021, table 1 (megatron_2021_table1.txt): for each GPT model,
// planned on the paper's A100 cluster in the paper's setting (ZeRO stage 0,
// full recomputation, tensor and pipeline parallelism, no sequence
// parallelism, which came a year later), the published configuration
// (t, p, d = gpus / (t p)) must be feasible, its predicted throughput within
// 20 % of the published TFLOP/s per GPU, and it must rank in the top three,
// or else lose to a faster one by at most 20 % of the step, the comparison
// printed term by term.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dtplan/compare.hpp"
#include "dtrain.h"

namespace {

struct Row {
  double billions = 0;
  int heads = 0, hidden = 0, layers = 0, tp = 0, pp = 0, gpus = 0, batch = 0;
  double tflops = 0;
};

std::vector<Row> table() {
  std::ifstream in(DTRAIN_PLAN_TEST_DATA "/megatron_2021_table1.txt");
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    Row r;
    s >> r.billions >> r.heads >> r.hidden >> r.layers >> r.tp >> r.pp >> r.gpus >> r.batch >> r.tflops;
    if (s) rows.push_back(r);
  }
  return rows;
}

std::string name(const dt_plan_config& c) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, "t=%d p=%d d=%d %s v=%d mb=%d", c.tp, c.pp, c.dp,
                c.schedule == DT_PIPELINE_INTERLEAVED_1F1B ? "interleaved" : "1f1b", c.virtual_stages, c.micro_batch);
  return buffer;
}

TEST(Megatron2021, PublishedConfigurationsRankAndTheirThroughputIsPredicted) {
  const std::vector<Row> rows = table();
  ASSERT_EQ(rows.size(), 10u) << "megatron_2021_table1.txt not found or incomplete";
  for (const Row& row : rows) {
    SCOPED_TRACE(std::to_string(row.billions) + "B on " + std::to_string(row.gpus) + " GPUs");
    dt_plan_model m = DT_PLAN_MODEL_INIT;
    m.layers = row.layers;
    m.hidden = row.hidden;
    m.heads = row.heads;
    m.vocab = 51200;
    m.seq_len = 2048;
    dt_plan_cluster c = DT_PLAN_CLUSTER_INIT;
    ASSERT_EQ(dt_plan_cluster_preset(&c, "a100", row.gpus / 8), DT_OK);
    dt_plan_options o = DT_PLAN_OPTIONS_INIT;
    o.global_batch = row.batch;
    o.dimensions = DT_PLAN_DIM_TP | DT_PLAN_DIM_PP;
    o.zero_stages = 1u << 0;
    o.recompute = 1u << DT_PLAN_RECOMPUTE_FULL;
    o.sequence_parallel = 0;
    o.keep = 3;
    dt_plan* plan = nullptr;
    ASSERT_EQ(dt_plan_create(&plan, &m, &c, &o), DT_OK) << dt_error_last();

    // The published (t, p, d) at its fastest micro-batch and schedule.
    dt_plan_estimate published = DT_PLAN_ESTIMATE_INIT;
    published.time_step = INFINITY;
    const int d = row.gpus / (row.tp * row.pp);
    for (int mb = 1; mb <= 8; ++mb) {
      for (int v = 1; v <= 4; ++v) {
        dt_plan_config config = DT_PLAN_CONFIG_INIT;
        config.tp = row.tp;
        config.pp = row.pp;
        config.dp = d;
        config.micro_batch = mb;
        config.recompute = DT_PLAN_RECOMPUTE_FULL;
        config.virtual_stages = v;
        config.schedule = v > 1 ? DT_PIPELINE_INTERLEAVED_1F1B : DT_PIPELINE_1F1B;
        dt_plan_estimate e = DT_PLAN_ESTIMATE_INIT;
        if (dt_plan_evaluate(&m, &c, &o, &config, &e) == DT_OK && e.time_step < published.time_step) published = e;
      }
    }
    ASSERT_TRUE(std::isfinite(published.time_step)) << "the published configuration was rejected";
    EXPECT_NEAR(published.tflops_per_gpu, row.tflops, 0.2 * row.tflops);
    std::printf("%7.1fB: published t=%d p=%d d=%d: %.0f TFLOP/s published, %.0f predicted (%+.0f %%)\n", row.billions,
                row.tp, row.pp, d, row.tflops, published.tflops_per_gpu,
                100 * (published.tflops_per_gpu / row.tflops - 1));

    bool in_top_three = false;
    dt_plan_estimate best = DT_PLAN_ESTIMATE_INIT;
    ASSERT_EQ(dt_plan_ranked(plan, 0, &best), DT_OK);
    for (size_t i = 0; i < 3; ++i) {
      dt_plan_estimate e = DT_PLAN_ESTIMATE_INIT;
      ASSERT_EQ(dt_plan_ranked(plan, i, &e), DT_OK);
      in_top_three |= e.config.tp == row.tp && e.config.pp == row.pp && e.config.dp == d;
    }
    if (!in_top_three) {
      std::printf("  the planner's fastest, %s, beats it (%.2f s against %.2f s per step):\n%s",
                  name(best.config).c_str(), best.time_step, published.time_step,
                  dtplan::explain(best, published).c_str());
      EXPECT_LE(published.time_step, 1.2 * best.time_step);
    }
    EXPECT_EQ(dt_plan_destroy(plan), DT_OK);
  }
}

}  // namespace
