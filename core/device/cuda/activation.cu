// GELU and SiLU, forward and backward (device/activation_math.hpp), as
// grid-stride loops over the elements.
#include "device/activation_math.hpp"
#include "device/cuda/element.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/launch.cuh"
#include "device/cuda/layer_kernels.hpp"

namespace dtrain::device::cuda {

namespace {

template <typename E>
__global__ void activation_kernel(ActivationArgs a, bool backward) {
  using Bits = typename E::Bits;
  const auto* x = static_cast<const Bits*>(a.x);
  const auto* dy = static_cast<const Bits*>(a.dy);
  auto* out = static_cast<Bits*>(a.out);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.count; i += stride) {
    const float v = E::load(x[i]);
    out[i] = E::store(backward ? activation_slope(a.kind, v) * E::load(dy[i]) : activate(a.kind, v));
  }
}

void launch(const ActivationArgs& args, bool backward, cudaStream_t stream) {
  if (args.count == 0) return;
  with_element(args.dtype, "activation", [&](auto e) {
    activation_kernel<decltype(e)><<<element_blocks(args.count), kRowThreads, 0, stream>>>(args, backward);
  });
  check_launch("activation_kernel");
}

}  // namespace

void activation_forward(const ActivationArgs& args, cudaStream_t stream) { launch(args, false, stream); }

void activation_backward(const ActivationArgs& args, cudaStream_t stream) { launch(args, true, stream); }

}  // namespace dtrain::device::cuda
