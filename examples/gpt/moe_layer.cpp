#include "moe_layer.hpp"

#include <cblas.h>

#include "tensor.hpp"

namespace gpt {

namespace {

dt_moe_options options(const MoeConfig &cfg) {
  dt_moe_options o = DT_MOE_OPTIONS_INIT;
  o.num_experts = cfg.experts;
  o.top_k = cfg.top_k;
  o.normalize = 1;          // the k weights sum to 1 (Mixtral)
  o.capacity_factor = 0.0;  // dropless
  return o;
}

}  // namespace

int64_t MoeSaved::bytes() const {
  int64_t n = 0;
  for (const auto *v : {&logits, &weights, &received, &hidden, &y}) n += (int64_t)v->capacity() * 4;
  return n + (int64_t)(experts.capacity() + counts.capacity()) * 8;
}

void moe_forward(const MoeConfig &cfg, Group ep, const MoeParams &p, MoeSaved &s, const float *x, float *out,
                 int64_t rows, int64_t hidden) {
  const int64_t E = cfg.experts, k = cfg.top_k, L = E / ep.size, F = p.w1->local[2];
  const dt_moe_options o = options(cfg);
  s.logits.resize((size_t)(rows * E));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)E, (int)hidden, 1.0f, x, (int)hidden,
              p.router->w.data(), (int)hidden, 0.0f, s.logits.data(), (int)E);
  s.weights.resize((size_t)(rows * k));
  s.experts.resize((size_t)(rows * k));
  {
    View logits(s.logits.data(), rows, E), weights(s.weights.data(), rows, k), experts(s.experts.data(), rows, k);
    check(dt_moe_route(logits.get(), &o, weights.get(), experts.get(), nullptr), "dt_moe_route");
    dt_moe_plan *plan = nullptr;
    check(dt_moe_plan_create(&plan, ep.comm, experts.get(), hidden, &o), "dt_moe_plan_create");
    s.plan.reset(plan, dt_moe_plan_destroy);
  }
  int64_t received = 0;
  check(dt_moe_plan_received(s.plan.get(), &received), "dt_moe_plan_received");
  s.counts.resize((size_t)L);
  check(dt_moe_plan_expert_counts(s.plan.get(), s.counts.data(), (int)L), "dt_moe_plan_expert_counts");
  s.received.resize((size_t)(received * hidden));
  s.hidden.resize((size_t)(received * F));
  s.y.resize((size_t)(received * hidden));
  View in(x, rows, hidden), recv(s.received.data(), received, hidden), counts(s.counts.data(), L),
      w1(p.w1->w.data(), L, hidden, F), w2(p.w2->w.data(), L, F, hidden), h(s.hidden.data(), received, F),
      y(s.y.data(), received, hidden), weights(s.weights.data(), rows, k), output(out, rows, hidden);
  check(dt_moe_dispatch(s.plan.get(), in.get(), recv.get()), "dt_moe_dispatch");
  check(dt_moe_experts_forward(recv.get(), counts.get(), w1.get(), w2.get(), DT_MOE_GELU_TANH, h.get(), y.get()),
        "dt_moe_experts_forward");
  check(dt_moe_combine(s.plan.get(), y.get(), weights.get(), output.get()), "dt_moe_combine");
}

void moe_backward(const MoeConfig &cfg, const MoeParams &p, MoeSaved &s, const float *x, const float *dy,
                  float *dx, int64_t seqs, int64_t len, int64_t hidden, float weight) {
  const int64_t E = cfg.experts, k = cfg.top_k, L = (int64_t)s.counts.size(), F = p.w1->local[2];
  const int64_t rows = seqs * len, received = (int64_t)s.received.size() / hidden;
  const dt_moe_options o = options(cfg);
  std::vector<float> d_y(s.y.size()), d_weights(s.weights.size()), d_recv(s.received.size());
  std::vector<float> dw1(p.w1->g.size()), dw2(p.w2->g.size()), d_logits(s.logits.size());
  View dout(dy, rows, hidden), weights(s.weights.data(), rows, k), dyv(d_y.data(), received, hidden),
      dwv(d_weights.data(), rows, k), recv(s.received.data(), received, hidden), counts(s.counts.data(), L),
      w1(p.w1->w.data(), L, hidden, F), w2(p.w2->w.data(), L, F, hidden), h(s.hidden.data(), received, F),
      drecv(d_recv.data(), received, hidden), dw1v(dw1.data(), L, hidden, F), dw2v(dw2.data(), L, F, hidden),
      dxv(dx, rows, hidden), logits(s.logits.data(), rows, E), dlogits(d_logits.data(), rows, E);
  check(dt_moe_combine_backward(s.plan.get(), dout.get(), weights.get(), dyv.get(), dwv.get()),
        "dt_moe_combine_backward");
  check(dt_moe_experts_backward(recv.get(), counts.get(), w1.get(), w2.get(), DT_MOE_GELU_TANH, h.get(), dyv.get(),
                                drecv.get(), dw1v.get(), dw2v.get()),
        "dt_moe_experts_backward");
  for (size_t i = 0; i < dw1.size(); ++i) p.w1->g[i] += dw1[i];
  for (size_t i = 0; i < dw2.size(); ++i) p.w2->g[i] += dw2[i];
  check(dt_moe_dispatch_backward(s.plan.get(), drecv.get(), dxv.get()), "dt_moe_dispatch_backward");
  check(dt_moe_route_backward(logits.get(), dwv.get(), &o, dlogits.get()), "dt_moe_route_backward");
  for (int64_t q = 0; q < seqs; ++q) {
    View lg(s.logits.data() + q * len * E, len, E), dl(d_logits.data() + q * len * E, len, E);
    double loss = 0;
    check(dt_moe_balance_loss(lg.get(), &o, (double)(cfg.balance * weight), &loss, nullptr, dl.get()),
          "dt_moe_balance_loss");
  }
  // The router: logits = x R^T.
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)E, (int)hidden, (int)rows, 1.0f, d_logits.data(), (int)E,
              x, (int)hidden, 1.0f, p.router->g.data(), (int)hidden);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)hidden, (int)E, 1.0f, d_logits.data(),
              (int)E, p.router->w.data(), (int)hidden, 1.0f, dx, (int)hidden);
  s.plan.reset();  // one plan serves one forward and backward
}

}  // namespace gpt
