// dtrain/plan.h: defaults, presets and files, a search read back through
// the API, one configuration's evaluation and its refusals, and the
// documented errors for bad arguments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "dtrain.h"

namespace {

dt_plan_model small_model() {
  dt_plan_model m = DT_PLAN_MODEL_INIT;
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.vocab = 32000;
  m.seq_len = 1024;
  return m;
}

dt_plan_cluster cluster(const char* name, int nodes) {
  dt_plan_cluster c = DT_PLAN_CLUSTER_INIT;
  EXPECT_EQ(dt_plan_cluster_preset(&c, name, nodes), DT_OK) << dt_error_last();
  return c;
}

dt_plan_options batch(int64_t b) {
  dt_plan_options o = DT_PLAN_OPTIONS_INIT;
  o.global_batch = b;
  return o;
}

bool says(const std::string& text) { return std::string(dt_error_last()).find(text) != std::string::npos; }

TEST(PlanCapi, InitFunctionsMatchTheMacros) {
  dt_plan_model m;
  ASSERT_EQ(dt_plan_model_init(&m, DT_PLAN_MODEL_VERSION), DT_OK);
  EXPECT_EQ(m.kv_heads, DT_UNDEF);
  EXPECT_EQ(m.experts, DT_UNDEF);
  dt_plan_options o;
  ASSERT_EQ(dt_plan_options_init(&o, DT_PLAN_OPTIONS_VERSION), DT_OK);
  EXPECT_EQ(o.zero_stages, 0xFu);
  EXPECT_EQ(o.dimensions, 0xFu);
  dt_plan_config c;
  ASSERT_EQ(dt_plan_config_init(&c, DT_PLAN_CONFIG_VERSION), DT_OK);
  EXPECT_EQ(c.dp, 1);
  EXPECT_EQ(c.schedule, DT_PIPELINE_1F1B);
  EXPECT_EQ(dt_plan_model_init(nullptr, 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_options_init(&o, 2), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_config_init(&c, 0), DT_ERR_INVALID_ARGUMENT);
}

TEST(PlanCapi, PresetsAndClusterFiles) {
  const dt_plan_cluster a = cluster("a100", 4);
  EXPECT_EQ(a.nodes, 4);
  EXPECT_EQ(a.gpus_per_node, 8);
  EXPECT_EQ(a.peak_flops, 312e12);
  dt_plan_cluster c = DT_PLAN_CLUSTER_INIT;
  EXPECT_EQ(dt_plan_cluster_preset(&c, "v100", 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("a100, h100 and h200")) << dt_error_last();
  EXPECT_EQ(dt_plan_cluster_preset(&c, "h100", 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_cluster_preset(&c, nullptr, 1), DT_ERR_INVALID_ARGUMENT);
  c.version = 0;
  EXPECT_EQ(dt_plan_cluster_preset(&c, "h100", 1), DT_ERR_INVALID_ARGUMENT);

  const std::string path = "plan_capi_cluster_" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "preset = h200\nnodes = 3\ninter_bandwidth = 25e9\n";
  c = DT_PLAN_CLUSTER_INIT;
  ASSERT_EQ(dt_plan_cluster_load(&c, path.c_str()), DT_OK) << dt_error_last();
  EXPECT_EQ(c.nodes, 3);
  EXPECT_EQ(c.gpu_memory, 141e9);
  EXPECT_EQ(c.inter_bandwidth, 25e9);
  EXPECT_EQ(c.overlap, 1.0);
  std::ofstream(path) << "preset = h200\noverlap = 0\n";
  ASSERT_EQ(dt_plan_cluster_load(&c, path.c_str()), DT_OK) << dt_error_last();
  EXPECT_EQ(c.overlap, 0.0);
  // A version 1 struct ends before overlap: nothing is written there, and
  // read back it means 1 (every transfer can hide).
  dt_plan_cluster v1 = DT_PLAN_CLUSTER_INIT;
  v1.version = 1;
  v1.overlap = -7;
  ASSERT_EQ(dt_plan_cluster_load(&v1, path.c_str()), DT_OK) << dt_error_last();
  EXPECT_EQ(v1.overlap, -7);
  std::ofstream(path) << "preset = h200\nlatency = 1\n";
  EXPECT_EQ(dt_plan_cluster_load(&c, path.c_str()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says(":2: unknown key \"latency\"")) << dt_error_last();
  std::remove(path.c_str());
  EXPECT_EQ(dt_plan_cluster_load(&c, path.c_str()), DT_ERR_IO);
}

TEST(PlanCapi, SearchReadBack) {
  const dt_plan_model m = small_model();
  const dt_plan_cluster c = cluster("h100", 2);
  dt_plan_options o = batch(64);
  o.keep = 5;
  dt_plan* plan = nullptr;
  ASSERT_EQ(dt_plan_create(&plan, &m, &c, &o), DT_OK) << dt_error_last();
  dt_plan_summary s = DT_PLAN_SUMMARY_INIT;
  ASSERT_EQ(dt_plan_info(plan, &s), DT_OK);
  EXPECT_EQ(s.kept, 5u);
  EXPECT_GT(s.evaluated, s.feasible);
  double previous = 0;
  for (size_t i = 0; i < s.kept; ++i) {
    dt_plan_estimate e = DT_PLAN_ESTIMATE_INIT;
    ASSERT_EQ(dt_plan_ranked(plan, i, &e), DT_OK);
    EXPECT_EQ(e.reason, DT_PLAN_ACCEPTED);
    EXPECT_GE(e.time_step, previous);
    previous = e.time_step;
    EXPECT_EQ(e.config.dp * e.config.tp * e.config.pp * e.config.cp * e.config.ep, 16);
    EXPECT_EQ(e.mem_total, e.mem_parameters + e.mem_gradients + e.mem_optimizer_state + e.mem_master_weights +
                               e.mem_activations + e.mem_communication);
    // The ranked estimate is what evaluating its configuration gives.
    dt_plan_estimate again = DT_PLAN_ESTIMATE_INIT;
    ASSERT_EQ(dt_plan_evaluate(&m, &c, &o, &e.config, &again), DT_OK) << dt_error_last();
    EXPECT_EQ(again.time_step, e.time_step);
    EXPECT_EQ(again.mem_total, e.mem_total);
  }
  dt_plan_estimate e = DT_PLAN_ESTIMATE_INIT;
  EXPECT_EQ(dt_plan_ranked(plan, 5, &e), DT_ERR_INVALID_ARGUMENT);
  dt_plan_rejection r = DT_PLAN_REJECTION_INIT;
  ASSERT_EQ(dt_plan_rejected(plan, DT_PLAN_REJECT_EXPERTS_EP, &r), DT_OK);
  EXPECT_GT(r.count, 0);
  EXPECT_GT(r.example.ep, 1);
  EXPECT_NE(std::string(r.message).find("dense model"), std::string::npos) << r.message;
  ASSERT_EQ(dt_plan_rejected(plan, DT_PLAN_REJECT_HEADS_TP, &r), DT_OK);
  EXPECT_EQ(r.count, 0);
  EXPECT_EQ(dt_plan_rejected(plan, DT_PLAN_ACCEPTED, &r), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_rejected(plan, static_cast<dt_plan_reason>(10), &r), DT_ERR_INVALID_ARGUMENT);

  const std::string json = "plan_capi_" + std::to_string(getpid()) + ".json";
  ASSERT_EQ(dt_plan_write(plan, json.c_str(), DT_PLAN_JSON, 3), DT_OK) << dt_error_last();
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"rank\": 3"), std::string::npos);
  EXPECT_EQ(text.find("\"rank\": 4"), std::string::npos);
  std::remove(json.c_str());
  EXPECT_EQ(dt_plan_write(plan, "/nonexistent/dir/plan.svg", DT_PLAN_SVG, 3), DT_ERR_IO);
  EXPECT_EQ(dt_plan_write(plan, json.c_str(), static_cast<dt_plan_format>(3), 3), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_write(plan, nullptr, DT_PLAN_JSON, 3), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_destroy(plan), DT_OK);
  EXPECT_EQ(dt_plan_destroy(nullptr), DT_OK);
}

TEST(PlanCapi, EvaluateRefusesWithTheReason) {
  const dt_plan_model m = small_model();
  const dt_plan_cluster c = cluster("a100", 1);
  const dt_plan_options o = batch(64);
  dt_plan_config config = DT_PLAN_CONFIG_INIT;
  dt_plan_estimate e = DT_PLAN_ESTIMATE_INIT;

  config.tp = 8;  // 16 heads: fine
  ASSERT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &e), DT_OK) << dt_error_last();
  EXPECT_GT(e.time_tp, 0);

  dt_plan_model odd = m;
  odd.heads = 8;
  odd.hidden = 1024;
  dt_plan_cluster six = c;
  six.gpus_per_node = 6;
  config.tp = 6;
  EXPECT_EQ(dt_plan_evaluate(&odd, &six, &o, &config, &e), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.reason, DT_PLAN_REJECT_HEADS_TP);
  EXPECT_TRUE(says("not divisible by tp = 6")) << dt_error_last();
  EXPECT_EQ(e.time_step, 0);

  config.tp = 1;
  config.pp = 8;
  config.schedule = DT_PIPELINE_INTERLEAVED_1F1B;
  config.virtual_stages = 2;
  EXPECT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &e), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.reason, DT_PLAN_REJECT_LAYERS_PP);
  EXPECT_TRUE(says("pp*v = 16")) << dt_error_last();

  dt_plan_model big = m;
  big.layers = 64;
  big.hidden = 8192;
  big.heads = 64;
  config = DT_PLAN_CONFIG_INIT;
  config.dp = 8;
  EXPECT_EQ(dt_plan_evaluate(&big, &c, &o, &config, &e), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.reason, DT_PLAN_REJECT_MEMORY);
  EXPECT_TRUE(says("rejected (memory): needs")) << dt_error_last();
  EXPECT_GT(e.mem_total, static_cast<int64_t>(72e9));
  EXPECT_GT(e.time_step, 0);
}

TEST(PlanCapi, OverlapSetsWhatDataParallelCommunicationShows) {
  const dt_plan_model m = small_model();
  const dt_plan_options o = batch(64);
  dt_plan_config config = DT_PLAN_CONFIG_INIT;
  config.dp = 8;
  dt_plan_estimate hidden = DT_PLAN_ESTIMATE_INIT, shown = DT_PLAN_ESTIMATE_INIT, v1 = DT_PLAN_ESTIMATE_INIT;

  dt_plan_cluster c = cluster("a100", 1);
  ASSERT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &hidden), DT_OK) << dt_error_last();
  c.overlap = 0;
  ASSERT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &shown), DT_OK) << dt_error_last();
  EXPECT_GT(shown.time_dp, hidden.time_dp);
  EXPECT_DOUBLE_EQ(shown.time_step - shown.time_dp, hidden.time_step - hidden.time_dp);
  // A version 1 caller has no overlap field: the library reads none, and takes 1.
  c.version = 1;
  c.overlap = -3;
  ASSERT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &v1), DT_OK) << dt_error_last();
  EXPECT_EQ(v1.time_dp, hidden.time_dp);

  c.version = DT_PLAN_CLUSTER_VERSION;
  c.overlap = 1.5;
  EXPECT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &v1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("overlap must be in [0, 1]")) << dt_error_last();
}

TEST(PlanCapi, BadArguments) {
  const dt_plan_model m = small_model();
  const dt_plan_cluster c = cluster("a100", 1);
  const dt_plan_options o = batch(64);
  dt_plan* plan = nullptr;
  EXPECT_EQ(dt_plan_create(nullptr, &m, &c, &o), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_create(&plan, nullptr, &c, &o), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_create(&plan, &m, nullptr, &o), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_create(&plan, &m, &c, nullptr), DT_ERR_INVALID_ARGUMENT);
  dt_plan_model bad = m;
  bad.heads = 12;  // 1024 % 12
  EXPECT_EQ(dt_plan_create(&plan, &bad, &c, &o), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("not divisible by model.heads")) << dt_error_last();
  bad = m;
  bad.top_k = 2;  // dense
  EXPECT_EQ(dt_plan_create(&plan, &bad, &c, &o), DT_ERR_INVALID_ARGUMENT);
  bad = m;
  bad.version = 7;
  EXPECT_EQ(dt_plan_create(&plan, &bad, &c, &o), DT_ERR_INVALID_ARGUMENT);
  dt_plan_cluster no_memory = c;
  no_memory.gpu_memory = 0;
  EXPECT_EQ(dt_plan_create(&plan, &m, &no_memory, &o), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("gpu_memory")) << dt_error_last();
  dt_plan_options no_batch = DT_PLAN_OPTIONS_INIT;
  EXPECT_EQ(dt_plan_create(&plan, &m, &c, &no_batch), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("global_batch")) << dt_error_last();
  dt_plan_options no_stage = o;
  no_stage.zero_stages = 0;
  EXPECT_EQ(dt_plan_create(&plan, &m, &c, &no_stage), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);

  dt_plan_config config = DT_PLAN_CONFIG_INIT;
  dt_plan_estimate e = DT_PLAN_ESTIMATE_INIT;
  config.recompute = static_cast<dt_plan_recompute>(3);
  EXPECT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &e), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.reason, DT_PLAN_ACCEPTED);
  config = DT_PLAN_CONFIG_INIT;
  config.schedule = DT_PIPELINE_ZB_H1;
  EXPECT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &e), DT_ERR_INVALID_ARGUMENT);
  config = DT_PLAN_CONFIG_INIT;
  config.zero_stage = 4;
  EXPECT_EQ(dt_plan_evaluate(&m, &c, &o, &config, &e), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_evaluate(&m, &c, &o, nullptr, &e), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_evaluate(&m, &c, &o, &config, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_plan_info(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
