#include "adamw.hpp"

#include <cmath>

namespace gpt {

void AdamW::step(const std::vector<Param *> &params, float lr) {
  ++steps;
  const float c1 = 1.0f - std::pow(beta1, (float)steps), c2 = 1.0f - std::pow(beta2, (float)steps);
  const float decay = 1.0f - lr * weight_decay, step_size = lr / c1, root_c2 = std::sqrt(c2);
  for (Param *p : params) {
    if (p->m.empty()) {
      p->m.assign(p->w.size(), 0.0f);
      p->v.assign(p->w.size(), 0.0f);
    }
    float *w = p->w.data(), *m = p->m.data(), *v = p->v.data();
    const float *g = p->g.data();
    for (size_t i = 0, n = p->w.size(); i < n; ++i) {
      m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
      v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
      w[i] = w[i] * decay - step_size * m[i] / (std::sqrt(v[i]) / root_c2 + eps);
    }
  }
}

}  // namespace gpt
