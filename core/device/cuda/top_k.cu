// The k largest elements of each row (device/kernel_args.hpp), one block per
// row and k passes over it: pass i finds, among the elements ranked after
// the (i-1)-th winner (device/top_k_order.hpp), the first in rank order.
// O(k * cols) work per row, no scratch memory: meant for routing's small k.
#include "device/cuda/element.cuh"
#include "device/cuda/error.hpp"
#include "device/cuda/launch.cuh"
#include "device/cuda/layer_kernels.hpp"
#include "device/top_k_order.hpp"

namespace dtrain::device::cuda {

namespace {

// A candidate: index -1 when a thread has none, ranked after every element.
struct Candidate {
  float value;
  std::int64_t index;
};

__device__ bool better(const Candidate& a, const Candidate& b) {
  if (a.index < 0) return false;
  if (b.index < 0) return true;
  return ranks_before(a.value, a.index, b.value, b.index);
}

// The best candidate of the block, in every thread.
__device__ Candidate block_best(Candidate mine) {
  __shared__ float values[kRowThreads];
  __shared__ std::int64_t indices[kRowThreads];
  values[threadIdx.x] = mine.value;
  indices[threadIdx.x] = mine.index;
  __syncthreads();
  for (int half = kRowThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const Candidate other{values[threadIdx.x + half], indices[threadIdx.x + half]};
      const Candidate own{values[threadIdx.x], indices[threadIdx.x]};
      if (better(other, own)) {
        values[threadIdx.x] = other.value;
        indices[threadIdx.x] = other.index;
      }
    }
    __syncthreads();
  }
  const Candidate best{values[0], indices[0]};
  __syncthreads();  // the arrays are rewritten by the next pass
  return best;
}

template <typename E>
__global__ void top_k_kernel(TopKArgs a) {
  using Bits = typename E::Bits;
  const std::int64_t cols = a.shape.cols;
  for (std::int64_t r = blockIdx.x; r < a.shape.rows; r += gridDim.x) {
    const Bits* x = static_cast<const Bits*>(a.x) + r * cols;
    Candidate previous{0.0f, -1};
    for (std::int64_t i = 0; i < a.k; ++i) {
      Candidate mine{0.0f, -1};
      for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        const Candidate c{E::load(x[j]), j};
        const bool after_previous = previous.index < 0 || better(previous, c);
        if (after_previous && better(c, mine)) mine = c;
      }
      previous = block_best(mine);
      if (threadIdx.x == 0) {
        static_cast<Bits*>(a.values)[r * a.k + i] = x[previous.index];
        a.indices[r * a.k + i] = previous.index;
      }
    }
  }
}

}  // namespace

void top_k(const TopKArgs& args, cudaStream_t stream) {
  if (args.shape.rows == 0) return;
  with_element(args.dtype, "top_k", [&](auto e) {
    top_k_kernel<decltype(e)><<<row_blocks(args.shape.rows), kRowThreads, 0, stream>>>(args);
  });
  check_launch("top_k_kernel");
}

}  // namespace dtrain::device::cuda
