// Rejections with their reasons, and the search: what it ranks, what it
// counts, and how the step time is put together.
#include "plan/search.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.hpp"

namespace dtrain::plan {
namespace {

Transformer small() {
  Transformer t;
  t.layers = 8;
  t.hidden = 1024;
  t.heads = 16;
  t.kv_heads = 16;
  t.ffn = 4096;
  t.vocab = 32000;
  t.seq = 1024;
  return t;
}

Options batch(std::int64_t b) {
  Options o;
  o.global_batch = b;
  return o;
}

Verdict verdict_of(const Transformer& t, const Cluster& c, const Options& o, const Config& config) {
  Estimate e;
  return evaluate(t, c, o, config, e);
}

bool says(const Verdict& v, const std::string& text) { return v.message.find(text) != std::string::npos; }

TEST(Rejections, HeadsNotDivisibleByTp) {
  Config c;
  c.tp = 3;
  c.dp = 1;
  Cluster cluster = preset("a100", 1);
  cluster.gpus_per_node = 3;
  const Verdict v = verdict_of(small(), cluster, batch(8), c);
  EXPECT_EQ(v.reason, Reason::heads_tp);
  EXPECT_TRUE(says(v, "16 heads (16 key/value heads) are not divisible by tp = 3")) << v.message;
}

TEST(Rejections, KeyValueHeadsNotDivisibleByTp) {
  Transformer t = small();
  t.kv_heads = 2;
  Config c;
  c.tp = 4;
  c.dp = 2;
  EXPECT_EQ(verdict_of(t, preset("a100", 1), batch(8), c).reason, Reason::heads_tp);
}

TEST(Rejections, LayersNotDivisibleByPipelineTimesVirtualStages) {
  Config c;
  c.pp = 2;
  c.dp = 4;
  c.schedule = Schedule::interleaved;
  c.virtual_stages = 3;
  const Verdict v = verdict_of(small(), preset("a100", 1), batch(64), c);
  EXPECT_EQ(v.reason, Reason::layers_pp);
  EXPECT_TRUE(says(v, "8 layers are not divisible by pp*v = 6")) << v.message;
  c.pp = 8;
  c.dp = 1;
  c.schedule = Schedule::one_f_one_b;
  c.virtual_stages = 1;
  Transformer t = small();
  t.layers = 12;
  EXPECT_EQ(verdict_of(t, preset("a100", 1), batch(64), c).reason, Reason::layers_pp);
}

TEST(Rejections, MemoryExceededStillEstimates) {
  Transformer t = small();
  t.layers = 96;
  t.hidden = 8192;
  t.heads = 64;
  t.kv_heads = 64;
  t.ffn = 4 * 8192;
  Cluster one = preset("a100", 1);
  one.gpus_per_node = 1;
  Config c;
  Estimate e;
  const Verdict v = evaluate(t, one, batch(8), c, e);
  EXPECT_EQ(v.reason, Reason::memory);
  EXPECT_TRUE(says(v, "MB usable (90 % of 80000 MB)")) << v.message;
  // 16 bytes per parameter at least.
  EXPECT_GE(e.memory.total, 16 * total_parameters(t));
  EXPECT_GT(e.time.step, 0);
}

TEST(Rejections, EveryOtherReason) {
  const Cluster c8 = preset("a100", 1);
  Config c;
  c.dp = 8;
  c.micro_batch = 3;
  EXPECT_EQ(verdict_of(small(), c8, batch(64), c).reason, Reason::batch);  // 64 % (8 * 3)
  c = Config{};
  c.dp = 4;
  c.pp = 2;
  c.schedule = Schedule::interleaved;
  c.virtual_stages = 2;
  EXPECT_EQ(verdict_of(small(), c8, batch(12), c).reason, Reason::schedule);  // 3 micro-batches, pp = 2
  c.pp = 1;
  c.dp = 8;
  EXPECT_EQ(verdict_of(small(), c8, batch(64), c).reason, Reason::schedule);  // interleaved without pp
  c = Config{};
  c.cp = 8;
  Transformer t = small();
  t.seq = 1000;
  EXPECT_EQ(verdict_of(t, c8, batch(8), c).reason, Reason::seq_cp);
  c = Config{};
  c.ep = 2;
  c.dp = 4;
  EXPECT_EQ(verdict_of(small(), c8, batch(8), c).reason, Reason::experts_ep);  // dense model
  t = small();
  t.experts = 6;
  t.top_k = 2;
  c.ep = 4;
  c.dp = 2;
  EXPECT_EQ(verdict_of(t, c8, batch(8), c).reason, Reason::experts_ep);
  c = Config{};
  c.dp = 4;
  EXPECT_EQ(verdict_of(small(), c8, batch(8), c).reason, Reason::gpus);
  t = small();
  t.ffn = 4098;
  c.dp = 2;
  c.tp = 4;
  EXPECT_EQ(verdict_of(t, c8, batch(8), c).reason, Reason::ffn_tp);
}

TEST(Rejections, ModelsThatAreNoTransformer) {
  Transformer t = small();
  t.heads = 12;  // 1024 % 12
  t.kv_heads = 12;
  EXPECT_THROW(search(t, preset("a100", 1), batch(8)), Error);
  t = small();
  t.kv_heads = 5;
  EXPECT_THROW(search(t, preset("a100", 1), batch(8)), Error);
  EXPECT_THROW(search(small(), preset("a100", 1), batch(0)), Error);
}

TEST(Search, RanksFeasibleConfigurationsFastestFirstAndCountsTheRest) {
  Options o = batch(64);
  o.keep = 20;
  const Plan plan = search(small(), preset("h100", 2), o);
  ASSERT_EQ(plan.ranked.size(), 20u);
  std::int64_t rejected = 0;
  for (const Rejections& r : plan.rejected) rejected += r.count;
  EXPECT_EQ(plan.feasible + rejected, plan.evaluated);
  EXPECT_EQ(plan.rejected[0].count, 0);
  for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
    const Estimate& e = plan.ranked[i];
    if (i > 0) {
      EXPECT_LE(plan.ranked[i - 1].time.step, e.time.step);
    }
    EXPECT_EQ(e.config.gpus(), 16);
    EXPECT_LE(static_cast<double>(e.memory.total), 0.9 * 80e9);
    const Time& t = e.time;
    EXPECT_NEAR(t.step, t.compute + t.recompute + t.bubble + t.tp + t.cp + t.ep + t.pp + t.dp + t.optimizer,
                1e-12 * t.step);
    if (e.config.pp == 1) {
      EXPECT_EQ(t.bubble, 0);
    }
    if (e.config.tp == 1) {
      EXPECT_EQ(t.tp, 0);
    }
    EXPECT_NEAR(e.mfu, e.model_flops / (t.step * 16 * 989e12), 1e-12);
  }
  // Heads 16 on 16 GPUs: every tp divides, so no heads rejection; the dense
  // model rejects every ep > 1.
  EXPECT_EQ(plan.rejected[static_cast<std::size_t>(Reason::heads_tp)].count, 0);
  EXPECT_GT(plan.rejected[static_cast<std::size_t>(Reason::experts_ep)].count, 0);
}

// ZB-H1 only when asked (bit 3): a third of 1F1B's bubble, the same memory.
TEST(Search, ZeroBubbleOnlyWhenAskedWithAThirdOfTheBubbleAndTheSameMemory) {
  Options o = batch(64);
  o.keep = 100000;
  for (const Estimate& e : search(small(), preset("h100", 2), o).ranked) {
    EXPECT_NE(e.config.schedule, Schedule::zb_h1);
  }
  o.schedules = (1u << static_cast<int>(Schedule::one_f_one_b)) | (1u << static_cast<int>(Schedule::zb_h1));
  const Plan plan = search(small(), preset("h100", 2), o);
  int pairs = 0;
  for (const Estimate& zb : plan.ranked) {
    if (zb.config.schedule != Schedule::zb_h1) continue;
    EXPECT_EQ(zb.config.virtual_stages, 1);
    ASSERT_GT(zb.config.pp, 1);
    for (const Estimate& one : plan.ranked) {
      Config same = zb.config;
      same.schedule = Schedule::one_f_one_b;
      if (one.config.schedule != Schedule::one_f_one_b || one.config.dp != same.dp || one.config.tp != same.tp ||
          one.config.pp != same.pp || one.config.cp != same.cp || one.config.ep != same.ep ||
          one.config.zero_stage != same.zero_stage || one.config.micro_batch != same.micro_batch ||
          one.config.recompute != same.recompute) {
        continue;
      }
      ++pairs;
      EXPECT_EQ(zb.memory.total, one.memory.total);
      const double m = static_cast<double>(zb.micro_batches), p = zb.config.pp;
      const double third = (p - 1 + std::max(0.0, p - m)) / (3 * m) / ((p - 1) / m);
      EXPECT_NEAR(zb.time.bubble, third * one.time.bubble, 1e-9 * one.time.bubble);
      EXPECT_LT(zb.time.step, one.time.step);
    }
  }
  EXPECT_GT(pairs, 0);
  o.schedules = 0x10;
  EXPECT_THROW(search(small(), preset("h100", 2), o), Error);
}

TEST(Search, OneGpuHasNoCommunication) {
  Cluster one = preset("h100", 1);
  one.gpus_per_node = 1;
  const Plan plan = search(small(), one, batch(8));
  ASSERT_FALSE(plan.ranked.empty());
  for (const Estimate& e : plan.ranked) {
    EXPECT_EQ(e.time.tp + e.time.cp + e.time.ep + e.time.pp + e.time.dp + e.time.bubble, 0);
  }
}

TEST(Search, NothingFeasibleStillSucceedsAndSaysWhy) {
  Transformer t = small();
  t.layers = 128;
  t.hidden = 16384;
  t.heads = 128;
  t.kv_heads = 128;
  t.ffn = 65536;
  Cluster one = preset("a100", 1);
  one.gpus_per_node = 1;
  const Plan plan = search(t, one, batch(8));
  EXPECT_EQ(plan.feasible, 0);
  EXPECT_TRUE(plan.ranked.empty());
  EXPECT_GT(plan.rejected[static_cast<std::size_t>(Reason::memory)].count, 0);
  EXPECT_NE(plan.rejected[static_cast<std::size_t>(Reason::memory)].message.find("needs"), std::string::npos);
}

TEST(Search, ExpertParallelismShardsTheExperts) {
  Transformer t = small();
  t.experts = 8;
  t.top_k = 2;
  const Cluster c8 = preset("h100", 1);
  Config dense_experts;
  dense_experts.dp = 8;
  Config sharded;
  sharded.dp = 1;
  sharded.ep = 8;
  const StageStates a = stage_states(t, dense_experts);
  const StageStates b = stage_states(t, sharded);
  // The experts' parameters, 8 per layer on one rank, are 1 per layer on each of 8.
  EXPECT_EQ(a.first.parameters - b.first.parameters, 2 * t.layers * 7 * mlp_parameters(t));
  Estimate e;
  EXPECT_TRUE(evaluate(t, c8, batch(16), sharded, e).accepted());
  EXPECT_GT(e.time.ep, 0);
}

TEST(Search, SlowerNetworkMakesDataParallelismDearer) {
  Config c;
  c.dp = 16;
  const Cluster fast = preset("a100", 2);
  Cluster slow = fast;
  slow.inter.bandwidth /= 10;
  Estimate a, b;
  ASSERT_TRUE(evaluate(small(), fast, batch(64), c, a).accepted());
  ASSERT_TRUE(evaluate(small(), slow, batch(64), c, b).accepted());
  EXPECT_GT(b.time.dp, a.time.dp);
  EXPECT_EQ(b.time.compute, a.time.compute);
}

}  // namespace
}  // namespace dtrain::plan
