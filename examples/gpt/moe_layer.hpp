// The mixture-of-experts MLP of a block, over libdtrain's expert
// parallelism: a router (a linear map to E scores), top-k routing without a
// capacity limit (no token is dropped, so the result does not depend on how
// tokens are grouped), dispatch of every token to the ep rank of its experts,
// the experts (two-layer GELU MLPs, dt_moe_experts_forward) and the weighted
// combine; the backward in reverse. The Switch load-balancing loss is taken
// per sequence, which makes it independent of data and pipeline splits too.
//
// The router is replicated (dense); the experts' weights [E, H, F] and
// [E, F, H] are split over ep by experts. An expert's gradient on its rank
// sums the contributions of every ep rank's tokens.
#pragma once

#include <dtrain.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "param.hpp"

namespace gpt {

struct MoeConfig {
  int experts = 0, top_k = 2;
  float balance = 0.01f;  // coefficient of the load-balancing loss
};

struct MoeParams {
  Param *router, *w1, *w2;
};

struct MoeSaved {
  std::vector<float> logits, weights, received, hidden, y;
  std::vector<int64_t> experts, counts;
  std::shared_ptr<dt_moe_plan> plan;
  int64_t bytes() const;
};

// out [rows, H] = the layer applied to x [rows, H]. Collective over ep.
void moe_forward(const MoeConfig &cfg, Group ep, const MoeParams &p, MoeSaved &s, const float *x, float *out,
                 int64_t rows, int64_t hidden);
// Writes dx [rows, H] from dy, adds the parameter gradients; the balance
// loss of each of the `seqs` sequences of `len` rows enters with `weight`.
// Collective over the ep group of the forward (its plan remembers it).
void moe_backward(const MoeConfig &cfg, const MoeParams &p, MoeSaved &s, const float *x, const float *dy,
                  float *dx, int64_t seqs, int64_t len, int64_t hidden, float weight);

}  // namespace gpt
