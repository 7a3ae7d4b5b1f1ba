// dtbench tp's activation between its two linear layers: GELU (tanh form)
// and its gradient over f32 arrays, by libdtrain's CPU kernel, which
// vectorizes as a trainer's own GELU does (torch's does), so that the
// block's time is its GEMMs and collectives rather than a call to tanhf per
// element.
#pragma once

#include <cstddef>

namespace dtbench {

// a[i] = gelu(h[i]).
void gelu_forward(const float* h, float* a, std::size_t count);
// dh[i] = gelu'(h[i]) * da[i].
void gelu_backward(const float* h, const float* da, float* dh, std::size_t count);

}  // namespace dtbench
