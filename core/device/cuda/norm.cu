// Layer norm and RMS norm (device/kernel_args.hpp). Forward and the dx part
// of backward run one block per row; dgamma and dbeta, sums over rows, run
// one thread per column, so that neighbouring threads read neighbouring
// elements of each row.
#include "device/cuda/block_reduce.cuh"
#include "device/cuda/element.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/layer_kernels.hpp"

namespace dtrain::device::cuda {

namespace {

template <typename E>
__global__ void norm_forward_kernel(NormArgs a) {
  using Bits = typename E::Bits;
  const std::int64_t n = a.shape.cols;
  const bool centred = a.beta != nullptr;
  const auto* gamma = static_cast<const Bits*>(a.gamma);
  const auto* beta = static_cast<const Bits*>(a.beta);
  for (std::int64_t r = blockIdx.x; r < a.shape.rows; r += gridDim.x) {
    const Bits* x = static_cast<const Bits*>(a.x) + r * n;
    Bits* y = static_cast<Bits*>(a.y) + r * n;
    float sum = 0.0f;
    if (centred) {
      for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += E::load(x[j]);
    }
    const float mean = centred ? block_sum(sum) / static_cast<float>(n) : 0.0f;
    float squares = 0.0f;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float d = E::load(x[j]) - mean;
      squares += d * d;
    }
    const float rstd = rsqrtf(block_sum(squares) / static_cast<float>(n) + a.eps);
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float scaled = (E::load(x[j]) - mean) * rstd * E::load(gamma[j]);
      y[j] = E::store(centred ? scaled + E::load(beta[j]) : scaled);
    }
    if (threadIdx.x == 0) {
      if (centred) a.mean[r] = mean;
      a.rstd[r] = rstd;
    }
  }
}

template <typename E>
__global__ void norm_dx_kernel(NormBackwardArgs a) {
  using Bits = typename E::Bits;
  const std::int64_t n = a.shape.cols;
  const bool centred = a.mean != nullptr;
  const auto* gamma = static_cast<const Bits*>(a.gamma);
  for (std::int64_t r = blockIdx.x; r < a.shape.rows; r += gridDim.x) {
    const Bits* x = static_cast<const Bits*>(a.x) + r * n;
    const Bits* dy = static_cast<const Bits*>(a.dy) + r * n;
    Bits* dx = static_cast<Bits*>(a.dx) + r * n;
    const float mean = centred ? a.mean[r] : 0.0f;
    const float rstd = a.rstd[r];
    float g_sum = 0.0f, g_xhat_sum = 0.0f;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float g = E::load(dy[j]) * E::load(gamma[j]);
      g_sum += g;
      g_xhat_sum += g * (E::load(x[j]) - mean) * rstd;
    }
    const float g_mean = centred ? block_sum(g_sum) / static_cast<float>(n) : 0.0f;
    const float g_xhat_mean = block_sum(g_xhat_sum) / static_cast<float>(n);
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const float g = E::load(dy[j]) * E::load(gamma[j]);
      const float xhat = (E::load(x[j]) - mean) * rstd;
      dx[j] = E::store(rstd * (g - g_mean - xhat * g_xhat_mean));
    }
  }
}

template <typename E>
__global__ void norm_dparams_kernel(NormBackwardArgs a) {
  using Bits = typename E::Bits;
  const std::int64_t n = a.shape.cols;
  const bool centred = a.mean != nullptr;
  const auto* x = static_cast<const Bits*>(a.x);
  const auto* dy = static_cast<const Bits*>(a.dy);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    float dgamma = 0.0f, dbeta = 0.0f;
    for (std::int64_t r = 0; r < a.shape.rows; ++r) {
      const float d = E::load(dy[r * n + j]);
      const float mean = centred ? a.mean[r] : 0.0f;
      dgamma += d * (E::load(x[r * n + j]) - mean) * a.rstd[r];
      dbeta += d;
    }
    static_cast<Bits*>(a.dgamma)[j] = E::store(dgamma);
    if (centred) static_cast<Bits*>(a.dbeta)[j] = E::store(dbeta);
  }
}

}  // namespace

void norm_forward(const NormArgs& args, cudaStream_t stream) {
  if (args.shape.rows == 0) return;
  with_element(args.dtype, "norm", [&](auto e) {
    norm_forward_kernel<decltype(e)><<<row_blocks(args.shape.rows), kRowThreads, 0, stream>>>(args);
  });
  check_launch("norm_forward_kernel");
}

void norm_backward(const NormBackwardArgs& args, cudaStream_t stream) {
  with_element(args.dtype, "norm_backward", [&](auto e) {
    if (args.shape.rows > 0) {
      norm_dx_kernel<decltype(e)><<<row_blocks(args.shape.rows), kRowThreads, 0, stream>>>(args);
      check_launch("norm_dx_kernel");
    }
    norm_dparams_kernel<decltype(e)><<<element_blocks(args.shape.cols), kRowThreads, 0, stream>>>(args);
  });
  check_launch("norm_dparams_kernel");
}

}  // namespace dtrain::device::cuda
