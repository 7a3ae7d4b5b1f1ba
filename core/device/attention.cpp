#include "device/attention.hpp"

#include "base/error.hpp"
#include "device/cpu/attention.hpp"
#ifdef DTRAIN_HAVE_CUDA
#include "device/cuda/attention.hpp"
#endif

// The CUDA version of a call; in builds without CUDA no Queue is on a
// device, and this is never reached.
#ifdef DTRAIN_HAVE_CUDA
#define DTRAIN_ON_CUDA(call) call
#else
#define DTRAIN_ON_CUDA(call) raise(DT_ERR_UNSUPPORTED, "blockwise attention: this build has no CUDA kernels")
#endif

namespace dtrain::device {

void attention_forward(Queue& queue, const AttentionShape& shape, const float* q, const float* k, const float* v,
                       AttentionPositions positions, float* o, float* lse) {
  if (queue.memory() == Memory::host) return cpu::attention_forward(shape, q, k, v, positions, o, lse);
  DTRAIN_ON_CUDA(cuda::attention_forward(queue, shape, q, k, v, positions, o, lse));
}

void attention_merge(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim, float* o,
                     float* lse, const float* o_other, const float* lse_other) {
  if (queue.memory() == Memory::host) return cpu::attention_merge(rows, heads, head_dim, o, lse, o_other, lse_other);
  DTRAIN_ON_CUDA(cuda::attention_merge(queue, rows, heads, head_dim, o, lse, o_other, lse_other));
}

void attention_output_dot(Queue& queue, std::int64_t rows, std::int64_t heads, std::int64_t head_dim,
                          const float* d_o, const float* o, float* delta) {
  if (queue.memory() == Memory::host) return cpu::attention_output_dot(rows, heads, head_dim, d_o, o, delta);
  DTRAIN_ON_CUDA(cuda::attention_output_dot(queue, rows, heads, head_dim, d_o, o, delta));
}

void attention_backward(Queue& queue, const AttentionShape& shape, const AttentionGradientInputs& in,
                        AttentionPositions positions, float* dq, float* dk, float* dv) {
  if (queue.memory() == Memory::host) return cpu::attention_backward(shape, in, positions, dq, dk, dv);
  DTRAIN_ON_CUDA(cuda::attention_backward(queue, shape, in, positions, dq, dk, dv));
}

}  // namespace dtrain::device
