// The kernels of optim_kernels.hpp. A launch has one block per Chunk; the
// block's threads stride over the Chunk four elements at a time (16-byte
// loads of f32, 8-byte loads of f16/bf16) when all of its pointers allow it,
// one element at a time for the rest. The element type is a switch on the
// Chunk's dtype, uniform across the block, so tensors of every dtype share
// the launch.
#include <climits>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "device/cuda/error.hpp"
#include "device/cuda/half.cuh"
#include "device/cuda/optim_kernels.hpp"

namespace dtrain::device::cuda::optim {

namespace {

constexpr int kThreads = 256;
constexpr int kVector = 4;  // elements per vector access
static_assert(kChunkElements % kVector == 0 && kChunkElements <= INT32_MAX);

template <typename T, int K>
struct alignas(sizeof(T) * K) Pack {
  T v[K];
};

// How each dtype is stored and widened, with half.cuh's conversions (those
// of the CPU kernels).
struct F32 {
  using type = float;
  static __device__ float load(float x) { return x; }
  static __device__ float store(float x) { return x; }
};
struct F16 {
  using type = std::uint16_t;
  static __device__ float load(std::uint16_t x) { return half_to_float(x); }
  static __device__ std::uint16_t store(float x) { return float_to_half(x); }
};
struct BF16 {
  using type = std::uint16_t;
  static __device__ float load(std::uint16_t x) { return bf16_to_float(x); }
  static __device__ std::uint16_t store(float x) { return float_to_bf16(x); }
};

__device__ __forceinline__ bool aligned(const void* p, unsigned bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// ---- update rules ---------------------------------------------------------
// Each takes the raw gradient in g and leaves the scaled one there; p is the
// parameter (from the master when there is one); s0 and s1 the state of the
// first kStates buffers. The operations are those of cpu/optim_*.cpp, in order.

enum class Momentum { none, heavy_ball, nesterov };

template <Momentum kMomentum>
struct SgdRule {
  static constexpr int kStates = kMomentum == Momentum::none ? 0 : 1;
  SgdConstants c;
  __device__ bool write_grad() const { return c.grad_factor != 1.0f; }
  __device__ void operator()(float& p, float& g, float& s0, float&) const {
    g = __fmul_rn(g, c.grad_factor);
    float d = __fadd_rn(g, __fmul_rn(c.weight_decay, p));
    if constexpr (kMomentum != Momentum::none) {
      const float b = __fadd_rn(__fmul_rn(c.keep, s0), __fmul_rn(c.take, d));
      s0 = b;
      d = kMomentum == Momentum::nesterov ? __fadd_rn(d, __fmul_rn(c.momentum_factor, b)) : b;
    }
    p = __fsub_rn(p, __fmul_rn(c.lr, d));
  }
};

struct AdamwRule {
  static constexpr int kStates = 2;
  AdamwConstants c;
  __device__ bool write_grad() const { return c.grad_factor != 1.0f; }
  __device__ void operator()(float& p, float& g, float& m, float& v) const {
    g = __fmul_rn(g, c.grad_factor);
    p = __fsub_rn(p, __fmul_rn(c.lr_weight_decay, p));
    m = __fadd_rn(__fmul_rn(c.beta1, m), __fmul_rn(c.one_minus_beta1, g));
    v = __fadd_rn(__fmul_rn(c.beta2, v), __fmul_rn(c.one_minus_beta2, __fmul_rn(g, g)));
    const float denom = __fadd_rn(__fmul_rn(__fsqrt_rn(v), c.inv_sqrt_bias2), c.eps);
    p = __fsub_rn(p, __fmul_rn(c.step_size, __fdiv_rn(m, denom)));
  }
};

// ---- update kernels -------------------------------------------------------

// Elements [K * q, K * q + K) of a Chunk: loaded, updated, stored.
template <typename E, bool kMaster, int K, typename Rule>
__device__ __forceinline__ void update_pack(const Rule& rule, const Chunk& c, int q) {
  using T = typename E::type;
  float p[K], g[K], s0[K] = {}, s1[K] = {};
  const Pack<T, K> gv = reinterpret_cast<const Pack<T, K>*>(c.grad)[q];
  if constexpr (kMaster) {
    const Pack<float, K> mv = reinterpret_cast<const Pack<float, K>*>(c.master)[q];
#pragma unroll
    for (int k = 0; k < K; ++k) p[k] = mv.v[k];
  } else {
    const Pack<T, K> pv = reinterpret_cast<const Pack<T, K>*>(c.param)[q];
#pragma unroll
    for (int k = 0; k < K; ++k) p[k] = E::load(pv.v[k]);
  }
  if constexpr (Rule::kStates >= 1) {
    const Pack<float, K> v = reinterpret_cast<const Pack<float, K>*>(c.state0)[q];
#pragma unroll
    for (int k = 0; k < K; ++k) s0[k] = v.v[k];
  }
  if constexpr (Rule::kStates >= 2) {
    const Pack<float, K> v = reinterpret_cast<const Pack<float, K>*>(c.state1)[q];
#pragma unroll
    for (int k = 0; k < K; ++k) s1[k] = v.v[k];
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    g[k] = E::load(gv.v[k]);
    rule(p[k], g[k], s0[k], s1[k]);
  }
  Pack<T, K> out;
#pragma unroll
  for (int k = 0; k < K; ++k) out.v[k] = E::store(p[k]);
  reinterpret_cast<Pack<T, K>*>(c.param)[q] = out;
  if constexpr (kMaster) {
    Pack<float, K> mv;
#pragma unroll
    for (int k = 0; k < K; ++k) mv.v[k] = p[k];
    reinterpret_cast<Pack<float, K>*>(c.master)[q] = mv;
  }
  if constexpr (Rule::kStates >= 1) {
    Pack<float, K> v;
#pragma unroll
    for (int k = 0; k < K; ++k) v.v[k] = s0[k];
    reinterpret_cast<Pack<float, K>*>(c.state0)[q] = v;
  }
  if constexpr (Rule::kStates >= 2) {
    Pack<float, K> v;
#pragma unroll
    for (int k = 0; k < K; ++k) v.v[k] = s1[k];
    reinterpret_cast<Pack<float, K>*>(c.state1)[q] = v;
  }
  if (rule.write_grad()) {
    Pack<T, K> gout;
#pragma unroll
    for (int k = 0; k < K; ++k) gout.v[k] = E::store(g[k]);
    reinterpret_cast<Pack<T, K>*>(c.grad)[q] = gout;
  }
}

template <typename E, bool kMaster, typename Rule>
__device__ void update_chunk(const Rule& rule, const Chunk& c) {
  using T = typename E::type;
  const bool vector = aligned(c.param, sizeof(T) * kVector) && aligned(c.grad, sizeof(T) * kVector) &&
                      aligned(c.master, 16) && aligned(c.state0, 16) && aligned(c.state1, 16);
  int done = 0;
  if (vector) {
    const int packs = c.count / kVector;
    for (int q = threadIdx.x; q < packs; q += blockDim.x) update_pack<E, kMaster, kVector>(rule, c, q);
    done = packs * kVector;
  }
  for (int i = done + threadIdx.x; i < c.count; i += blockDim.x) update_pack<E, kMaster, 1>(rule, c, i);
}

template <typename Rule>
__global__ void __launch_bounds__(kThreads) update_kernel(Rule rule, const Chunk* chunks) {
  const Chunk c = chunks[blockIdx.x];
  switch (static_cast<DType>(c.dtype)) {
    case DType::f32:
      update_chunk<F32, false>(rule, c);
      break;
    case DType::f16:
      update_chunk<F16, true>(rule, c);
      break;
    case DType::bf16:
      update_chunk<BF16, true>(rule, c);
      break;
    default:
      break;  // make_chunks accepts no other dtype
  }
}

// ---- squared norm ---------------------------------------------------------

// The sum of the block's `value`s, the same tree for every launch.
__device__ double block_sum(double value) {
  __shared__ double lanes[kThreads];
  lanes[threadIdx.x] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) lanes[threadIdx.x] = __dadd_rn(lanes[threadIdx.x], lanes[threadIdx.x + half]);
    __syncthreads();
  }
  return lanes[0];
}

template <typename E, int K>
__device__ __forceinline__ double squares(const Chunk& c, int q) {
  using T = typename E::type;
  const Pack<T, K> gv = reinterpret_cast<const Pack<T, K>*>(c.grad)[q];
  double sum = 0.0;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const double g = E::load(gv.v[k]);
    sum = __dadd_rn(sum, __dmul_rn(g, g));
  }
  return sum;
}

template <typename E>
__device__ double chunk_squares(const Chunk& c) {
  using T = typename E::type;
  double sum = 0.0;
  int done = 0;
  if (aligned(c.grad, sizeof(T) * kVector)) {
    const int packs = c.count / kVector;
    for (int q = threadIdx.x; q < packs; q += blockDim.x) sum = __dadd_rn(sum, squares<E, kVector>(c, q));
    done = packs * kVector;
  }
  for (int i = done + threadIdx.x; i < c.count; i += blockDim.x) sum = __dadd_rn(sum, squares<E, 1>(c, i));
  return sum;
}

__global__ void __launch_bounds__(kThreads) norm_partials_kernel(const Chunk* chunks, double* partials) {
  const Chunk c = chunks[blockIdx.x];
  double sum = 0.0;
  switch (static_cast<DType>(c.dtype)) {
    case DType::f32:
      sum = chunk_squares<F32>(c);
      break;
    case DType::f16:
      sum = chunk_squares<F16>(c);
      break;
    case DType::bf16:
      sum = chunk_squares<BF16>(c);
      break;
    default:
      break;
  }
  sum = block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(kThreads) norm_total_kernel(const double* partials, std::int64_t n, double* out) {
  double sum = 0.0;
  for (std::int64_t i = threadIdx.x; i < n; i += kThreads) sum = __dadd_rn(sum, partials[i]);
  sum = block_sum(sum);
  if (threadIdx.x == 0) *out = sum;
}

// ---- launchers ------------------------------------------------------------

unsigned grid_of(std::int64_t n) {
  if (n > INT32_MAX) {
    raise(DT_ERR_INVALID_ARGUMENT, "optimizer kernels: " + std::to_string(n) + " chunks exceed one launch's grid");
  }
  return static_cast<unsigned>(n);
}

template <typename Rule>
void launch_update(const Rule& rule, const Chunk* chunks, std::int64_t n, cudaStream_t stream, const char* name) {
  if (n == 0) return;
  update_kernel<<<grid_of(n), kThreads, 0, stream>>>(rule, chunks);
  check_launch(name);
}

std::size_t element_size(DType dtype) {
  if (dtype == DType::f32) return 4;
  if (dtype == DType::f16 || dtype == DType::bf16) return 2;
  raise(DT_ERR_INVALID_ARGUMENT,
        std::string("optimizer kernels: dtype ") + dtype_name(dtype) + " is not float32, float16 or bfloat16");
}

}  // namespace

std::vector<Chunk> make_chunks(const std::vector<Tensor>& tensors) {
  std::vector<Chunk> chunks;
  for (const Tensor& t : tensors) {
    const std::size_t size = element_size(t.dtype);
    for (std::int64_t first = 0; first < t.count; first += kChunkElements) {
      const std::int64_t count = t.count - first < kChunkElements ? t.count - first : kChunkElements;
      const auto offset = static_cast<std::size_t>(first);
      Chunk c;
      c.param = static_cast<char*>(t.param) + offset * size;
      c.grad = static_cast<char*>(t.grad) + offset * size;
      c.master = t.master ? t.master + offset : nullptr;
      c.state0 = t.state[0] ? t.state[0] + offset : nullptr;
      c.state1 = t.state[1] ? t.state[1] + offset : nullptr;
      c.count = static_cast<std::int32_t>(count);
      c.dtype = static_cast<std::int32_t>(t.dtype);
      chunks.push_back(c);
    }
  }
  return chunks;
}

void sgd_update(const SgdConstants& constants, const Chunk* chunks, std::int64_t n, cudaStream_t stream) {
  if (!constants.momentum) {
    launch_update(SgdRule<Momentum::none>{constants}, chunks, n, stream, "sgd_update");
  } else if (constants.nesterov) {
    launch_update(SgdRule<Momentum::nesterov>{constants}, chunks, n, stream, "sgd_update");
  } else {
    launch_update(SgdRule<Momentum::heavy_ball>{constants}, chunks, n, stream, "sgd_update");
  }
}

void adamw_update(const AdamwConstants& constants, const Chunk* chunks, std::int64_t n, cudaStream_t stream) {
  launch_update(AdamwRule{constants}, chunks, n, stream, "adamw_update");
}

void squared_norm(const Chunk* chunks, std::int64_t n, double* partials, double* out, cudaStream_t stream) {
  if (n > 0) {
    norm_partials_kernel<<<grid_of(n), kThreads, 0, stream>>>(chunks, partials);
    check_launch("squared_norm");
  }
  norm_total_kernel<<<1, kThreads, 0, stream>>>(partials, n, out);
  check_launch("squared_norm");
}

}  // namespace dtrain::device::cuda::optim
