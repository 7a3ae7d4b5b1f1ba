// Each formula of docs/planner.md against values worked out by hand, and
// against the closed forms of the papers it comes from.
#include <gtest/gtest.h>

#include <cmath>

#include "plan/activations.hpp"
#include "plan/collectives.hpp"
#include "plan/memory.hpp"
#include "plan/step_time.hpp"
#include "plan/transformer.hpp"

namespace dtrain::plan {
namespace {

Transformer tiny() {
  Transformer t;
  t.layers = 2;
  t.hidden = 8;
  t.heads = 4;
  t.kv_heads = 4;
  t.ffn = 32;
  t.vocab = 10;
  t.seq = 4;
  return t;
}

// Megatron-LM's GPT shapes: ffn = 4h, multi-head attention.
Transformer gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads) {
  Transformer t;
  t.layers = layers;
  t.hidden = hidden;
  t.heads = heads;
  t.kv_heads = heads;
  t.ffn = 4 * hidden;
  t.vocab = 51200;
  t.seq = 2048;
  return t;
}

TEST(Parameters, TinyModelByHand) {
  const Transformer t = tiny();
  // QKV 8x24 + 24, output 8x8 + 8.
  EXPECT_EQ(attention_parameters(t), 192 + 24 + 64 + 8);
  // 8x32 + 32, 32x8 + 8.
  EXPECT_EQ(mlp_parameters(t), 256 + 32 + 256 + 8);
  EXPECT_EQ(norm_parameters(t), 32);
  EXPECT_EQ(embedding_parameters(t), (10 + 4) * 8);
  EXPECT_EQ(final_norm_parameters(t), 16);
  EXPECT_EQ(total_parameters(t), 2 * (288 + 552 + 32) + 112 + 16);
}

TEST(Parameters, GroupedQueryAttentionShrinksKeysAndValues) {
  Transformer t = tiny();
  t.kv_heads = 2;  // head_dim 2: K and V are 4 wide
  EXPECT_EQ(attention_parameters(t), 8 * 16 + 16 + 64 + 8);
}

TEST(Parameters, MixtureOfExpertsMultipliesTheMlpAndAddsARouter) {
  Transformer t = tiny();
  t.experts = 4;
  t.top_k = 2;
  EXPECT_EQ(router_parameters(t), 8 * 4);
  EXPECT_EQ(layer_expert_parameters(t), 4 * 552);
  EXPECT_EQ(layer_dense_parameters(t), 288 + 32 + 32);
}

// Narayanan et al. 2021, section 5.1: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh)),
// plus the final layer norm's 2h, which the paper leaves out.
TEST(Parameters, MegatronClosedForm) {
  for (const Transformer& t : {gpt(24, 2304, 24), gpt(128, 25600, 160)}) {
    const double l = static_cast<double>(t.layers), h = static_cast<double>(t.hidden);
    const double p = 12 * l * h * h * (1 + 13 / (12 * h) + (51200.0 + 2048.0) / (12 * l * h));
    EXPECT_NEAR(static_cast<double>(total_parameters(t) - final_norm_parameters(t)), p, 1e-9 * p);
  }
}

// The same paper's FLOPs per iteration with full recomputation:
// 96 B s l h^2 (1 + s/(6h) + V/(16lh)); without it, 72 B s l h^2 (1 + s/(6h) + V/(12lh)).
TEST(Flops, MegatronClosedForms) {
  const Transformer t = gpt(128, 25600, 160);
  const double b = 3072, s = 2048, l = 128, h = 25600, v = 51200;
  const double full = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  const double none = 72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  EXPECT_NEAR(hardware_flops(t, b, Recompute::full), full, 1e-12 * full);
  EXPECT_NEAR(model_flops(t, b), none, 1e-12 * none);
  EXPECT_DOUBLE_EQ(hardware_flops(t, b, Recompute::none), model_flops(t, b));
  // Selective recomputation adds the attention core's forward, 4 s h per token per layer.
  EXPECT_NEAR(hardware_flops(t, b, Recompute::selective) - model_flops(t, b), b * s * l * 4 * s * h, 1e3);
}

// Korthikanti et al. 2022, table 2, per layer in bytes: s b h (34 + 5 a s / h)
// without parallelism; s b h (10 + 24/t + 5 a s/(h t)) with tensor
// parallelism; s b h / t (34 + 5 a s / h) with sequence parallelism too;
// 34 s b h / t with selective recomputation; 2 s b h (/ t with sequence
// parallelism) with full recomputation.
TEST(Activations, KorthikantiTable2) {
  const Transformer t = gpt(1, 12288, 96);
  const double s = 2048, b = 2, h = 12288, a = 96, tp = 8;
  const double sbh = s * b * h;
  EXPECT_NEAR(layer_activation_bytes(t, 2, {1, 1, false}, Recompute::none), sbh * (34 + 5 * a * s / h), 1);
  EXPECT_NEAR(layer_activation_bytes(t, 2, {8, 1, false}, Recompute::none), sbh * (10 + 24 / tp + 5 * a * s / (h * tp)),
              1);
  EXPECT_NEAR(layer_activation_bytes(t, 2, {8, 1, true}, Recompute::none), sbh / tp * (34 + 5 * a * s / h), 1);
  EXPECT_NEAR(layer_activation_bytes(t, 2, {8, 1, true}, Recompute::selective), 34 * sbh / tp, 1);
  EXPECT_NEAR(layer_activation_bytes(t, 2, {8, 1, false}, Recompute::full), 2 * sbh, 1);
  EXPECT_NEAR(layer_activation_bytes(t, 2, {8, 1, true}, Recompute::full), 2 * sbh / tp, 1);
}

TEST(Activations, ContextParallelSplitsTheSequenceAndKeepsNoScores) {
  const Transformer t = gpt(1, 4096, 32);
  // cp = 4: s/4 tokens each, blockwise attention: 34 s b h / 4.
  EXPECT_NEAR(layer_activation_bytes(t, 1, {1, 4, false}, Recompute::none), 34.0 * 512 * 4096, 1);
  // The logits: 4 bytes per vocabulary entry per token, split over tp and cp.
  EXPECT_NEAR(logit_bytes(t, 1, {2, 4, false}), 4.0 * 512 * 51200 / 2, 1);
}

TEST(Activations, GroupedQueryAttentionAndWiderMlp) {
  Transformer t = tiny();  // s 4, h 8, a 4
  t.kv_heads = 2;          // kv_width 4
  t.ffn = 24;
  const double s = 4, h = 8;
  // 10 sbh + 4 sbh + 4 sb kv_width + 4 sb ffn + 5 a s^2 b, b = 1.
  EXPECT_NEAR(layer_activation_bytes(t, 1, {1, 1, false}, Recompute::none),
              14 * s * h + 4 * s * 4 + 4 * s * 24 + 5 * 4 * s * s, 1e-9);
}

TEST(Pipeline, BubbleAndActivationsInFlight) {
  EXPECT_DOUBLE_EQ(bubble_ratio(Schedule::one_f_one_b, 4, 1, 8), 3.0 / 8);
  EXPECT_DOUBLE_EQ(bubble_ratio(Schedule::gpipe, 4, 1, 8), 3.0 / 8);
  EXPECT_DOUBLE_EQ(bubble_ratio(Schedule::interleaved, 4, 2, 8), 3.0 / 16);
  EXPECT_DOUBLE_EQ(bubble_ratio(Schedule::one_f_one_b, 1, 1, 8), 0.0);
  // ZB-H1: a third of 1F1B's with m >= p; with m < p the last stage idles
  // p - m more units (p = 4, m = 2: 3 + 2 units against 6 of work).
  EXPECT_DOUBLE_EQ(bubble_ratio(Schedule::zb_h1, 4, 1, 8), 3.0 / 24);
  EXPECT_DOUBLE_EQ(bubble_ratio(Schedule::zb_h1, 4, 1, 2), 5.0 / 6);
  EXPECT_DOUBLE_EQ(bubble_ratio(Schedule::zb_h1, 1, 1, 8), 0.0);
  Config c;
  c.pp = 4;
  c.schedule = Schedule::gpipe;
  EXPECT_DOUBLE_EQ(first_stage_in_flight(c, 8), 8);
  c.schedule = Schedule::one_f_one_b;
  EXPECT_DOUBLE_EQ(first_stage_in_flight(c, 8), 4);
  EXPECT_DOUBLE_EQ(first_stage_in_flight(c, 2), 2);
  c.schedule = Schedule::interleaved;
  c.virtual_stages = 2;
  EXPECT_DOUBLE_EQ(first_stage_in_flight(c, 8), 4 + 3.0 / 2);  // p (1 + (p-1)/(p v))
  c.pp = 1;
  EXPECT_DOUBLE_EQ(first_stage_in_flight(c, 8), 1);
}

TEST(Collectives, RingAndTreeByHand) {
  const Link link{1e9, 1e-5};
  // 2 (n-1) (alpha + B / (n beta)): 6 * (1e-5 + 1e-3).
  EXPECT_DOUBLE_EQ(ring_allreduce(4, 4e6, link), 6 * (1e-5 + 1e-3));
  // (n-1) (alpha + B / (n beta)).
  EXPECT_DOUBLE_EQ(ring_allgather(4, 4e6, link), 3 * (1e-5 + 1e-3));
  // 2 ceil(log2 n) alpha + 2 B / beta.
  EXPECT_DOUBLE_EQ(tree_allreduce(4, 4e6, link), 4e-5 + 8e-3);
  EXPECT_DOUBLE_EQ(tree_allreduce(5, 64, link), 6e-5 + 128e-9);
  EXPECT_EQ(ring_allreduce(1, 4e6, link), 0);
  Cluster c;
  c.gpus_per_node = 8;
  c.intra = link;
  c.inter = {1e8, 1e-4};
  // Large: the ring wins; small: the tree (latency).
  EXPECT_DOUBLE_EQ(allreduce({4, 4}, 4e6, c), ring_allreduce(4, 4e6, link));
  EXPECT_DOUBLE_EQ(allreduce({4, 4}, 64, c), tree_allreduce(4, 64, link));
  // Across 2 nodes of 8: reduce-scatter and allgather inside the node
  // around an allreduce of 1/8 across nodes.
  EXPECT_DOUBLE_EQ(allreduce({16, 8}, 8e6, c), 2 * ring_allgather(8, 8e6, link) + ring_allreduce(2, 1e6, c.inter));
  EXPECT_DOUBLE_EQ(allgather({16, 8}, 8e6, c), ring_allgather(2, 1e6, c.inter) + ring_allgather(8, 8e6, link));
  // All-to-all of 4e6 bytes over 8 ranks, 4 per node: 3 shares inside, 4 across.
  EXPECT_DOUBLE_EQ(alltoall({8, 4}, 4e6, c), 3 * 5e5 / 1e9 + 4 * 5e5 / 1e8 + 3 * 1e-5 + 4 * 1e-4);
  EXPECT_DOUBLE_EQ(send(1e6, true, c), 1e-5 + 1e-3);
  EXPECT_DOUBLE_EQ(send(1e6, false, c), 1e-4 + 1e-2);
}

TEST(Overlap, DataParallelCommunicationHidesItsShareAsFarAsTheComputeLasts) {
  Cluster c;
  c.gpus_per_node = 8;
  c.intra = {1e9, 0};
  const Group g{2, 2};
  // Stage 0 on 8e6 bytes: an allreduce of 8 ms beside 5 ms of backward.
  const double allreduce_time = 8e-3;
  ASSERT_DOUBLE_EQ(allreduce(g, 8e6, c), allreduce_time);
  EXPECT_DOUBLE_EQ(data_parallel_time(0, g, 8e6, 1e-3, 5e-3, 1, c), 3e-3);  // overlap 1: what outlasts backward
  EXPECT_DOUBLE_EQ(data_parallel_time(0, g, 8e6, 1e-3, 20e-3, 1, c), 0);
  c.overlap = 0;  // nothing hides
  EXPECT_DOUBLE_EQ(data_parallel_time(0, g, 8e6, 1e-3, 20e-3, 1, c), allreduce_time);
  c.overlap = 0.25;  // a quarter of the 8 ms hides behind 20 ms, 2 ms at most behind 1 ms
  EXPECT_DOUBLE_EQ(exposed(8e-3, 20e-3, c), 6e-3);
  EXPECT_DOUBLE_EQ(exposed(8e-3, 1e-3, c), 7e-3);
  // Stage 3: the forward allgather (4 ms) and the backward allgather and
  // reduce-scatter (8 ms), a quarter of each hidden.
  EXPECT_DOUBLE_EQ(data_parallel_time(3, g, 8e6, 10e-3, 20e-3, 1, c), 3e-3 + 6e-3);
}

TEST(Collectives, GroupsFollowTheMeshLayout) {
  // tp = 8 innermost on nodes of 8: one node.
  EXPECT_EQ(group_of(8, 1, 8).local, 8);
  // dp of 4 outside tp = 8: one member per node.
  EXPECT_EQ(group_of(4, 8, 8).local, 1);
  // dp of 8 outside tp = 2: 4 members per node.
  EXPECT_EQ(group_of(8, 2, 8).local, 4);
  EXPECT_EQ(group_of(2, 2, 8).local, 2);
  // tp = 16 spans two nodes.
  EXPECT_EQ(group_of(16, 1, 8).local, 8);
  // Groups that do not tile the nodes cross a node boundary at the inter-node pace.
  EXPECT_EQ(group_of(6, 1, 8).local, 1);
  EXPECT_EQ(group_of(12, 1, 8).local, 1);
  EXPECT_EQ(group_of(2, 3, 8).local, 1);
}

}  // namespace
}  // namespace dtrain::plan
