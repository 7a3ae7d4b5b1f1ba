// An MoE layer through the C API, one process per rank, the ep communicator
// being the whole world (ep = 1, 2 or 4). Every rank builds every rank's
// data from seeds, so it can compute in double what a single process holding
// every expert computes (moe_reference.hpp), and compares its own part of the
// forward and backward passes with it: what dispatch delivers (exactly, in
// the documented order), the layer's output, the gradients of the weights,
// tokens and logits, and of the experts' parameters.
//
// The caller's expert e is f_e(x) = tanh(x W_e), W_e [H, H]. Tokens per rank
// are uneven and rank 1 has none; nobody routes to the last expert, so with
// ep = 4 and E = 4 the last rank receives nothing.
//
// CTest runs this alone (a world of one) and under dtrun with 2 and 4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "moe/moe_reference.hpp"

namespace {

using dtrain::testing::moe::Array;
using dtrain::testing::moe::expect_close;
using dtrain::testing::moe::Numbers;
using dtrain::testing::moe::numeric_gradient;
using dtrain::testing::moe::Routed;
using dtrain::testing::moe::route_reference;
using dtrain::testing::moe::RouterSpec;
using dtrain::testing::moe::weights_of;

constexpr double kTolerance = 1e-5;
constexpr double kGradientTolerance = 1e-4;  // float gradients against central differences
constexpr std::int64_t kHidden = 5;

std::int64_t tokens_of(int rank, int world) {
  static const std::int64_t kUneven[] = {7, 0, 11, 4};
  return world == 1 ? 9 : kUneven[rank % 4];
}

// One rank's inputs and what the reference makes of them.
struct RankData {
  std::int64_t tokens = 0;
  std::vector<double> logits, x, dy;  // [T, E], [T, H], [T, H]
  Routed routed;
  std::vector<double> y, d_weights, dx, d_logits;
};

struct Layer {
  RouterSpec spec;
  int world = 1;
  std::vector<std::vector<double>> w;  // per expert, [H, H]
  std::vector<RankData> ranks;
  std::vector<std::vector<double>> dw;  // d loss / d W_e, summed over every rank's tokens
};

// f = tanh(x W) for one row.
std::vector<double> expert_forward(const std::vector<double>& w, const double* x) {
  std::vector<double> f(kHidden, 0.0);
  for (std::int64_t o = 0; o < kHidden; ++o) {
    double z = 0.0;
    for (std::int64_t i = 0; i < kHidden; ++i) z += x[i] * w[static_cast<std::size_t>(i * kHidden + o)];
    f[static_cast<std::size_t>(o)] = std::tanh(z);
  }
  return f;
}

// From g = d loss / d f: adds x^T dz to dw and returns dz W^T, dz = g (1 - f^2).
std::vector<double> expert_backward(const std::vector<double>& w, const double* x, const std::vector<double>& f,
                                    const double* g, std::vector<double>& dw) {
  std::vector<double> dx(kHidden, 0.0);
  for (std::int64_t o = 0; o < kHidden; ++o) {
    const double dz = g[o] * (1.0 - f[static_cast<std::size_t>(o)] * f[static_cast<std::size_t>(o)]);
    for (std::int64_t i = 0; i < kHidden; ++i) {
      dw[static_cast<std::size_t>(i * kHidden + o)] += x[i] * dz;
      dx[static_cast<std::size_t>(i)] += dz * w[static_cast<std::size_t>(i * kHidden + o)];
    }
  }
  return dx;
}

Layer reference_layer(const RouterSpec& spec, int world, std::uint64_t seed) {
  Layer layer{spec, world, {}, {}, {}};
  for (int e = 0; e < spec.experts; ++e) layer.w.push_back(Numbers(seed * 100 + static_cast<std::uint64_t>(e)).take(kHidden * kHidden, 0.8));
  layer.dw.assign(static_cast<std::size_t>(spec.experts), std::vector<double>(kHidden * kHidden, 0.0));
  for (int r = 0; r < world; ++r) {
    RankData d;
    d.tokens = tokens_of(r, world);
    Numbers numbers(seed * 1000 + static_cast<std::uint64_t>(r));
    d.logits = numbers.take(static_cast<std::size_t>(d.tokens * spec.experts), 2.0);
    for (std::int64_t t = 0; t < d.tokens; ++t) d.logits[static_cast<std::size_t>(t * spec.experts + spec.experts - 1)] -= 30.0;
    d.x = numbers.take(static_cast<std::size_t>(d.tokens * kHidden));
    d.dy = numbers.take(static_cast<std::size_t>(d.tokens * kHidden));
    d.routed = route_reference(spec, d.logits, d.tokens);
    d.y.assign(d.x.size(), 0.0);
    d.dx.assign(d.x.size(), 0.0);
    d.d_weights.assign(d.routed.weights.size(), 0.0);
    for (std::int64_t t = 0; t < d.tokens; ++t) {
      const double* x = &d.x[static_cast<std::size_t>(t * kHidden)];
      const double* g = &d.dy[static_cast<std::size_t>(t * kHidden)];
      for (int j = 0; j < spec.k; ++j) {
        const auto pair = static_cast<std::size_t>(t * spec.k + j);
        const std::int64_t e = d.routed.experts[pair];
        if (e < 0) continue;
        const double weight = d.routed.weights[pair];
        const std::vector<double> f = expert_forward(layer.w[static_cast<std::size_t>(e)], x);
        std::vector<double> g_f(kHidden);
        for (std::int64_t h = 0; h < kHidden; ++h) {
          d.y[static_cast<std::size_t>(t * kHidden + h)] += weight * f[static_cast<std::size_t>(h)];
          d.d_weights[pair] += g[h] * f[static_cast<std::size_t>(h)];
          g_f[static_cast<std::size_t>(h)] = weight * g[h];
        }
        const std::vector<double> dx =
            expert_backward(layer.w[static_cast<std::size_t>(e)], x, f, g_f.data(), layer.dw[static_cast<std::size_t>(e)]);
        for (std::int64_t h = 0; h < kHidden; ++h) d.dx[static_cast<std::size_t>(t * kHidden + h)] += dx[static_cast<std::size_t>(h)];
      }
    }
    // d_logits: the weights' gradient through the router, the choice held fixed.
    auto objective = [&](const std::vector<double>& l) {
      double sum = 0.0;
      for (std::int64_t t = 0; t < d.tokens; ++t) {
        const std::vector<int> chosen(d.routed.chosen.begin() + t * spec.k, d.routed.chosen.begin() + (t + 1) * spec.k);
        const auto w = weights_of(spec, &l[static_cast<std::size_t>(t * spec.experts)], chosen);
        for (int j = 0; j < spec.k; ++j) sum += d.d_weights[static_cast<std::size_t>(t * spec.k + j)] * w[j];
      }
      return sum;
    };
    d.d_logits = numeric_gradient(objective, d.logits);
    layer.ranks.push_back(std::move(d));
  }
  return layer;
}

// The rows rank `rank` must receive, in the documented order: by local
// expert, then source rank, then token.
std::vector<double> expected_received(const Layer& layer, int rank, std::vector<std::int64_t>& counts) {
  const int local = layer.spec.experts / layer.world;
  std::vector<double> rows;
  counts.assign(static_cast<std::size_t>(local), 0);
  for (int l = 0; l < local; ++l) {
    const int e = rank * local + l;
    for (const RankData& source : layer.ranks) {
      for (std::size_t p = 0; p < source.routed.experts.size(); ++p) {
        if (source.routed.experts[p] != e) continue;
        const std::size_t t = p / static_cast<std::size_t>(layer.spec.k);
        rows.insert(rows.end(), source.x.begin() + static_cast<std::ptrdiff_t>(t * kHidden),
                    source.x.begin() + static_cast<std::ptrdiff_t>((t + 1) * kHidden));
        ++counts[static_cast<std::size_t>(l)];
      }
    }
  }
  return rows;
}

class MoeLayer : public dtrain::testing::WorldFixture {
 protected:
  // Runs the layer on this rank with `ep` as the ep communicator and
  // compares it with the reference; counts in `dropped_anywhere` the pairs
  // the capacity dropped on all ranks of `ep`.
  void run_layer(dt_comm* ep, const RouterSpec& spec, std::uint64_t seed, std::int64_t& dropped_anywhere) {
    int ep_rank = 0, ep_size = 1;
    ASSERT_EQ(dt_comm_rank(ep, &ep_rank), DT_OK);
    ASSERT_EQ(dt_comm_size(ep, &ep_size), DT_OK);
    const Layer layer = reference_layer(spec, ep_size, seed);
    dropped_anywhere = 0;
    for (const RankData& d : layer.ranks) dropped_anywhere += d.routed.dropped;
    const RankData& mine = layer.ranks[static_cast<std::size_t>(ep_rank)];
    const std::int64_t t = mine.tokens;
    const dt_moe_options opts = spec.options();

    Array<float> logits({t, spec.experts}, mine.logits);
    Array<float> weights({t, spec.k});
    Array<std::int64_t> experts({t, spec.k});
    std::int64_t dropped = -1;
    EXPECT_EQ(dt_moe_route(&logits, &opts, &weights, &experts, &dropped), DT_OK) << dt_error_last();
    EXPECT_EQ(experts.values, mine.routed.experts);
    EXPECT_EQ(dropped, mine.routed.dropped);

    dt_moe_plan* plan = nullptr;
    ASSERT_EQ(dt_moe_plan_create(&plan, ep, &experts, kHidden, &opts), DT_OK) << dt_error_last();
    int first = -1, local = -1;
    ASSERT_EQ(dt_moe_plan_local_experts(plan, &first, &local), DT_OK);
    EXPECT_EQ(local, spec.experts / ep_size);
    EXPECT_EQ(first, ep_rank * local);
    std::int64_t received_rows = -1;
    ASSERT_EQ(dt_moe_plan_received(plan, &received_rows), DT_OK);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(local), -1), expected_counts;
    ASSERT_EQ(dt_moe_plan_expert_counts(plan, counts.data(), local), DT_OK);
    const std::vector<double> expected_rows = expected_received(layer, ep_rank, expected_counts);
    EXPECT_EQ(counts, expected_counts);
    // Nobody routes to the last expert: alone on the last rank, that rank receives nothing.
    if (local == 1 && ep_rank == ep_size - 1) {
      EXPECT_EQ(received_rows, 0);
    }
    ASSERT_EQ(received_rows * kHidden, static_cast<std::int64_t>(expected_rows.size()));

    Array<float> x({t, kHidden}, mine.x);
    Array<float> received({received_rows, kHidden}, -1.0f);
    ASSERT_EQ(dt_moe_dispatch(plan, &x, &received), DT_OK) << dt_error_last();
    EXPECT_EQ(received.values, std::vector<float>(expected_rows.begin(), expected_rows.end()));

    // The caller's experts, block by block.
    Array<float> expert_out({received_rows, kHidden});
    std::vector<std::vector<double>> saved_f;
    std::int64_t row = 0;
    for (int l = 0; l < local; ++l) {
      for (std::int64_t i = 0; i < counts[static_cast<std::size_t>(l)]; ++i, ++row) {
        std::vector<double> in(&received.values[static_cast<std::size_t>(row * kHidden)],
                               &received.values[static_cast<std::size_t>((row + 1) * kHidden)]);
        saved_f.push_back(expert_forward(layer.w[static_cast<std::size_t>(first + l)], in.data()));
        for (std::int64_t h = 0; h < kHidden; ++h) {
          expert_out[static_cast<std::size_t>(row * kHidden + h)] = static_cast<float>(saved_f.back()[static_cast<std::size_t>(h)]);
        }
      }
    }
    Array<float> y({t, kHidden}, 99.0f);
    ASSERT_EQ(dt_moe_combine(plan, &expert_out, &weights, &y), DT_OK) << dt_error_last();
    expect_close(y.values, mine.y, kTolerance, "y");

    Array<float> dy({t, kHidden}, mine.dy);
    Array<float> d_expert_out({received_rows, kHidden}, 99.0f);
    Array<float> d_weights({t, spec.k}, 99.0f);
    ASSERT_EQ(dt_moe_combine_backward(plan, &dy, &weights, &d_expert_out, &d_weights), DT_OK) << dt_error_last();
    expect_close(d_weights.values, mine.d_weights, kTolerance, "d_weights");

    Array<float> d_received({received_rows, kHidden});
    std::vector<std::vector<double>> dw(static_cast<std::size_t>(local), std::vector<double>(kHidden * kHidden, 0.0));
    row = 0;
    for (int l = 0; l < local; ++l) {
      for (std::int64_t i = 0; i < counts[static_cast<std::size_t>(l)]; ++i, ++row) {
        std::vector<double> in(&received.values[static_cast<std::size_t>(row * kHidden)],
                               &received.values[static_cast<std::size_t>((row + 1) * kHidden)]);
        std::vector<double> g(&d_expert_out.values[static_cast<std::size_t>(row * kHidden)],
                              &d_expert_out.values[static_cast<std::size_t>((row + 1) * kHidden)]);
        const auto dx_row = expert_backward(layer.w[static_cast<std::size_t>(first + l)], in.data(),
                                            saved_f[static_cast<std::size_t>(row)], g.data(), dw[static_cast<std::size_t>(l)]);
        for (std::int64_t h = 0; h < kHidden; ++h) {
          d_received[static_cast<std::size_t>(row * kHidden + h)] = static_cast<float>(dx_row[static_cast<std::size_t>(h)]);
        }
      }
    }
    for (int l = 0; l < local; ++l) {
      expect_close(dw[static_cast<std::size_t>(l)], layer.dw[static_cast<std::size_t>(first + l)], kTolerance, "d_w");
    }

    Array<float> dx({t, kHidden}, 99.0f);
    ASSERT_EQ(dt_moe_dispatch_backward(plan, &d_received, &dx), DT_OK) << dt_error_last();
    expect_close(dx.values, mine.dx, kTolerance, "d_tokens");

    Array<float> d_logits({t, spec.experts});
    ASSERT_EQ(dt_moe_route_backward(&logits, &d_weights, &opts, &d_logits), DT_OK) << dt_error_last();
    expect_close(d_logits.values, mine.d_logits, kGradientTolerance, "d_logits");

    EXPECT_EQ(dt_moe_plan_destroy(plan), DT_OK);
  }
};

TEST_F(MoeLayer, EqualsSingleProcessReference) {
  std::uint64_t seed = 1;
  for (int experts : {4, 8}) {
    for (int k : {1, 2}) {
      for (double factor : {0.0, 1.0, 0.75}) {
        const auto drop = factor == 0.75 ? DT_MOE_DROP_BY_SCORE : DT_MOE_DROP_BY_POSITION;
        const RouterSpec spec{experts, k, DT_MOE_SOFTMAX, k > 1, factor, drop};
        SCOPED_TRACE("E=" + std::to_string(experts) + " k=" + std::to_string(k) + " capacity " + std::to_string(factor));
        std::int64_t dropped = 0;
        run_layer(comm_, spec, seed++, dropped);
        if (HasFatalFailure()) return;
        if (factor == 0.75) {
          EXPECT_GT(dropped, 0) << "the capacity should drop pairs here";
        }
      }
    }
  }
}

// Rows travel by local expert (exchange threshold 0), in one exchange
// (threshold too large to reach), or copied straight between the ranks'
// memories (direct threshold 0, where the ranks share this host and may),
// from either send order; every way the layer equals the reference, dropped
// pairs and ranks without tokens included.
TEST_F(MoeLayer, EveryWayOfMovingRowsEqualsTheReference) {
  // Straight copies come back a token a round (round bytes 1), or all at
  // once (the default, at these sizes).
  struct Way {
    const char* exchange_bytes;
    const char* direct_bytes;
    const char* round_bytes;
  };
  const char* kNever = "2147483647";
  for (const Way way : {Way{"0", kNever, "1"}, Way{kNever, kNever, "1"}, Way{kNever, "0", "1"}, Way{"0", "0", "1"},
                        Way{kNever, "0", kNever}}) {
    SCOPED_TRACE(std::string("DTRAIN_MOE_EXCHANGE_BYTES=") + way.exchange_bytes + " DTRAIN_MOE_DIRECT_BYTES=" +
                 way.direct_bytes + " DTRAIN_MOE_DIRECT_ROUND_BYTES=" + way.round_bytes);
    ASSERT_EQ(setenv("DTRAIN_MOE_EXCHANGE_BYTES", way.exchange_bytes, 1), 0);
    ASSERT_EQ(setenv("DTRAIN_MOE_DIRECT_BYTES", way.direct_bytes, 1), 0);
    ASSERT_EQ(setenv("DTRAIN_MOE_DIRECT_ROUND_BYTES", way.round_bytes, 1), 0);
    std::int64_t dropped = 0;
    run_layer(comm_, RouterSpec{8, 2, DT_MOE_SOFTMAX, true, 0.0, DT_MOE_DROP_BY_POSITION}, 11, dropped);
    run_layer(comm_, RouterSpec{4, 1, DT_MOE_SOFTMAX, false, 0.75, DT_MOE_DROP_BY_SCORE}, 12, dropped);
    unsetenv("DTRAIN_MOE_EXCHANGE_BYTES");
    unsetenv("DTRAIN_MOE_DIRECT_BYTES");
    unsetenv("DTRAIN_MOE_DIRECT_ROUND_BYTES");
    if (HasFatalFailure()) return;
  }
}

TEST_F(MoeLayer, SigmoidRouterEqualsSingleProcessReference) {
  std::int64_t dropped = 0;
  run_layer(comm_, RouterSpec{8, 2, DT_MOE_SIGMOID, true, 1.25, DT_MOE_DROP_BY_SCORE}, 77, dropped);
}

// Four ranks as a mesh of ep = 2 by dp = 2: the two ep groups exchange their
// own tokens at once, each equal to its own reference.
TEST_F(MoeLayer, EachEpGroupOfAMeshEqualsItsReference) {
  if (size_ != 4) GTEST_SKIP() << "needs four ranks";
  const char* names[] = {"ep", "dp"};
  const int sizes[] = {2, 2};
  dt_mesh* mesh = nullptr;
  ASSERT_EQ(dt_mesh_create(&mesh, comm_, 2, names, sizes), DT_OK) << dt_error_last();
  dt_comm* ep = nullptr;
  ASSERT_EQ(dt_mesh_comm(mesh, "ep", &ep), DT_OK) << dt_error_last();
  int dp = 0;
  ASSERT_EQ(dt_mesh_coord(mesh, "dp", &dp), DT_OK);
  std::int64_t dropped = 0;
  run_layer(ep, RouterSpec{4, 2, DT_MOE_SOFTMAX, true, 1.0, DT_MOE_DROP_BY_POSITION}, 500 + static_cast<std::uint64_t>(dp),
            dropped);
  EXPECT_EQ(dt_comm_destroy(ep), DT_OK);
  EXPECT_EQ(dt_mesh_destroy(mesh), DT_OK);
}

}  // namespace
