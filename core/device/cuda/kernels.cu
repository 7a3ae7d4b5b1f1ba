// The element-wise kernels of kernels.hpp. Every kernel is a grid-stride loop
// over "packs" of K elements (16 bytes for the widest operand) when every
// pointer is aligned to its pack, plus a K = 1 launch for the tail or for
// unaligned pointers. Element operations are small functors so the same loop
// serves fill, scale, divide, casts and reductions.
#include "device/cuda/kernels.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

#include "base/error.hpp"
#include "device/cuda/error.hpp"
#include "device/cuda/half.cuh"
#include "device/wide.hpp"

namespace dtrain::device::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride beyond this

template <typename T, int K>
struct alignas(sizeof(T) * K) Pack {
  T v[K];
};

int blocks_for(std::int64_t work) {
  const std::int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

// ---- kernels --------------------------------------------------------------

// dst[i] = f(src[i]) (dst == src allowed: each thread reads its pack before
// writing it, and no other thread touches that pack).
template <int K, typename Out, typename In, typename F>
__global__ void map_kernel(Out* dst, const In* src, std::int64_t packs, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < packs; p += stride) {
    const Pack<In, K> a = reinterpret_cast<const Pack<In, K>*>(src)[p];
    Pack<Out, K> b;
#pragma unroll
    for (int k = 0; k < K; ++k) b.v[k] = f(a.v[k]);
    reinterpret_cast<Pack<Out, K>*>(dst)[p] = b;
  }
}

// dst[i] = f(dst[i], src[i]).
template <int K, typename T, typename F>
__global__ void combine_kernel(T* dst, const T* src, std::int64_t packs, F f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < packs; p += stride) {
    Pack<T, K> a = reinterpret_cast<const Pack<T, K>*>(dst)[p];
    const Pack<T, K> b = reinterpret_cast<const Pack<T, K>*>(src)[p];
#pragma unroll
    for (int k = 0; k < K; ++k) a.v[k] = f(a.v[k], b.v[k]);
    reinterpret_cast<Pack<T, K>*>(dst)[p] = a;
  }
}

// dst[i] = value.
template <int K, typename T>
__global__ void fill_kernel(T* dst, std::int64_t packs, T value) {
  Pack<T, K> b;
#pragma unroll
  for (int k = 0; k < K; ++k) b.v[k] = value;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < packs; p += stride) {
    reinterpret_cast<Pack<T, K>*>(dst)[p] = b;
  }
}

// ---- launchers ------------------------------------------------------------

template <typename Out, typename In>
constexpr int pack_of() {
  constexpr std::size_t wide = sizeof(Out) > sizeof(In) ? sizeof(Out) : sizeof(In);
  return static_cast<int>(16 / wide);
}

template <typename Out, typename In, typename F>
void map(Out* dst, const In* src, std::int64_t count, F f, cudaStream_t stream, const char* name) {
  if (count <= 0) return;
  constexpr int K = pack_of<Out, In>();
  std::int64_t done = 0;
  if (aligned(dst, sizeof(Out) * K) && aligned(src, sizeof(In) * K)) {
    const std::int64_t packs = count / K;
    if (packs > 0) {
      map_kernel<K><<<blocks_for(packs), kThreads, 0, stream>>>(dst, src, packs, f);
      check_launch(name);
    }
    done = packs * K;
  }
  if (done < count) {
    map_kernel<1><<<blocks_for(count - done), kThreads, 0, stream>>>(dst + done, src + done, count - done, f);
    check_launch(name);
  }
}

template <typename T, typename F>
void combine(T* dst, const T* src, std::int64_t count, F f, cudaStream_t stream, const char* name) {
  if (count <= 0) return;
  constexpr int K = pack_of<T, T>();
  std::int64_t done = 0;
  if (aligned(dst, sizeof(T) * K) && aligned(src, sizeof(T) * K)) {
    const std::int64_t packs = count / K;
    if (packs > 0) {
      combine_kernel<K><<<blocks_for(packs), kThreads, 0, stream>>>(dst, src, packs, f);
      check_launch(name);
    }
    done = packs * K;
  }
  if (done < count) {
    combine_kernel<1><<<blocks_for(count - done), kThreads, 0, stream>>>(dst + done, src + done, count - done, f);
    check_launch(name);
  }
}

template <typename T>
void fill_typed(T* dst, std::int64_t count, T value, cudaStream_t stream) {
  if (count <= 0) return;
  constexpr int K = pack_of<T, T>();
  std::int64_t done = 0;
  if (aligned(dst, sizeof(T) * K)) {
    const std::int64_t packs = count / K;
    if (packs > 0) {
      fill_kernel<K><<<blocks_for(packs), kThreads, 0, stream>>>(dst, packs, value);
      check_launch("fill");
    }
    done = packs * K;
  }
  if (done < count) {
    fill_kernel<1><<<blocks_for(count - done), kThreads, 0, stream>>>(dst + done, count - done, value);
    check_launch("fill");
  }
}

// ---- element operations ---------------------------------------------------

// Integer sums and products wrap as on the CPU (device/wide.hpp), products
// in at least unsigned int.
template <typename T>
struct Sum {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fadd_rn(a, b);
    } else if constexpr (std::is_same_v<T, double>) {
      return __dadd_rn(a, b);
    } else {
      return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
    }
  }
};
template <typename T>
struct Prod {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fmul_rn(a, b);
    } else if constexpr (std::is_same_v<T, double>) {
      return __dmul_rn(a, b);
    } else {
      using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Wide<T>>;
      return static_cast<T>(static_cast<U>(static_cast<Wide<T>>(a)) * static_cast<U>(static_cast<Wide<T>>(b)));
    }
  }
};
// NaN in dst stays (b > NaN is false); NaN in src is ignored, as on the CPU.
template <typename T>
struct Max {
  __device__ T operator()(T a, T b) const { return b > a ? b : a; }
};
template <typename T>
struct Min {
  __device__ T operator()(T a, T b) const { return b < a ? b : a; }
};

// A float operation applied to 16-bit storage: widen, compute, round once.
template <typename Op, bool Bf16>
struct Narrow16 {
  Op op;
  __device__ std::uint16_t operator()(std::uint16_t a, std::uint16_t b) const {
    if constexpr (Bf16) {
      return float_to_bf16(op(bf16_to_float(a), bf16_to_float(b)));
    } else {
      return float_to_half(op(half_to_float(a), half_to_float(b)));
    }
  }
};

template <typename T>
struct MulBy {
  T factor;
  __device__ T operator()(T a) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fmul_rn(a, factor);
    } else {
      return __dmul_rn(a, factor);
    }
  }
};
template <typename T>
struct DivBy {
  T divisor;
  __device__ T operator()(T a) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fdiv_rn(a, divisor);
    } else {
      return __ddiv_rn(a, divisor);
    }
  }
};
template <typename Op, bool Bf16>
struct Unary16 {
  Op op;
  __device__ std::uint16_t operator()(std::uint16_t a) const {
    if constexpr (Bf16) {
      return float_to_bf16(op(bf16_to_float(a)));
    } else {
      return float_to_half(op(half_to_float(a)));
    }
  }
};

// Conversions scaled on the way, in f32; a plain cast has factor 1, which
// changes no value.
struct F32ToHalf {
  float factor;
  __device__ std::uint16_t operator()(float a) const { return float_to_half(__fmul_rn(a, factor)); }
};
struct F32ToBf16 {
  float factor;
  __device__ std::uint16_t operator()(float a) const { return float_to_bf16(__fmul_rn(a, factor)); }
};
struct HalfToF32 {
  float factor;
  __device__ float operator()(std::uint16_t a) const { return __fmul_rn(half_to_float(a), factor); }
};
struct Bf16ToF32 {
  float factor;
  __device__ float operator()(std::uint16_t a) const { return __fmul_rn(bf16_to_float(a), factor); }
};

// ---- dispatch -------------------------------------------------------------

template <template <typename> class Op>
void reduce_as(DType dtype, void* dst, const void* src, std::int64_t count, cudaStream_t stream, const char* name) {
  switch (dtype) {
    case DType::f32:
      return combine(static_cast<float*>(dst), static_cast<const float*>(src), count, Op<float>{}, stream, name);
    case DType::f64:
      return combine(static_cast<double*>(dst), static_cast<const double*>(src), count, Op<double>{}, stream, name);
    case DType::f16:
      return combine(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(src), count,
                     Narrow16<Op<float>, false>{}, stream, name);
    case DType::bf16:
      return combine(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(src), count,
                     Narrow16<Op<float>, true>{}, stream, name);
    case DType::i32:
      return combine(static_cast<std::int32_t*>(dst), static_cast<const std::int32_t*>(src), count,
                     Op<std::int32_t>{}, stream, name);
    case DType::i64:
      return combine(static_cast<std::int64_t*>(dst), static_cast<const std::int64_t*>(src), count,
                     Op<std::int64_t>{}, stream, name);
    case DType::i8:
      return combine(static_cast<std::int8_t*>(dst), static_cast<const std::int8_t*>(src), count,
                     Op<std::int8_t>{}, stream, name);
    case DType::u8:
      return combine(static_cast<std::uint8_t*>(dst), static_cast<const std::uint8_t*>(src), count,
                     Op<std::uint8_t>{}, stream, name);
  }
  raise(DT_ERR_INTERNAL, std::string(name) + ": unknown dtype");
}

template <template <typename> class Op>
void unary_float(DType dtype, void* dst, const void* src, std::int64_t count, double operand, cudaStream_t stream,
                 const char* name) {
  switch (dtype) {
    case DType::f32:
      return map(static_cast<float*>(dst), static_cast<const float*>(src), count,
                 Op<float>{static_cast<float>(operand)}, stream, name);
    case DType::f64:
      return map(static_cast<double*>(dst), static_cast<const double*>(src), count, Op<double>{operand}, stream,
                 name);
    case DType::f16:
      return map(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(src), count,
                 Unary16<Op<float>, false>{Op<float>{static_cast<float>(operand)}}, stream, name);
    case DType::bf16:
      return map(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(src), count,
                 Unary16<Op<float>, true>{Op<float>{static_cast<float>(operand)}}, stream, name);
    default:
      raise(DT_ERR_INVALID_ARGUMENT,
            std::string(name) + ": " + dtype_name(dtype) + " is not a floating dtype (f32, f64, f16, bf16)");
  }
}

// Counts and pointers, checked before anything is queued: a device load of
// an element at an address that is not a multiple of its size would be a
// misaligned-address fault, which ends the process's CUDA context.
void require_pointers(const char* name, std::int64_t count, const void* dst, std::size_t dst_element,
                      const void* src, std::size_t src_element) {
  if (count < 0) raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + ": count " + std::to_string(count) + " is negative");
  if (count == 0) return;
  if (dst == nullptr || src == nullptr) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + ": NULL pointer with " + std::to_string(count) + " elements");
  }
  if (!aligned(dst, dst_element) || !aligned(src, src_element)) {
    raise(DT_ERR_INVALID_ARGUMENT, std::string(name) + ": a pointer is not aligned to its element size");
  }
}

}  // namespace

namespace detail {

void fill_bits(std::size_t width, void* dst, std::int64_t count, std::uint64_t bits, cudaStream_t stream) {
  require_pointers("fill", count, dst, width, dst, width);
  switch (width) {
    case 1: return fill_typed(static_cast<std::uint8_t*>(dst), count, static_cast<std::uint8_t>(bits), stream);
    case 2: return fill_typed(static_cast<std::uint16_t*>(dst), count, static_cast<std::uint16_t>(bits), stream);
    case 4: return fill_typed(static_cast<std::uint32_t*>(dst), count, static_cast<std::uint32_t>(bits), stream);
    case 8: return fill_typed(static_cast<std::uint64_t*>(dst), count, bits, stream);
  }
  raise(DT_ERR_INTERNAL, "fill: element width " + std::to_string(width));
}

}  // namespace detail

void scale(DType dtype, void* dst, const void* src, std::int64_t count, double factor, cudaStream_t stream) {
  require_pointers("scale", count, dst, dtype_size(dtype), src, dtype_size(dtype));
  if (count == 0 && dtype_is_floating(dtype)) return;
  unary_float<MulBy>(dtype, dst, src, count, factor, stream, "scale");
}

void divide(DType dtype, void* dst, std::int64_t count, double divisor, cudaStream_t stream) {
  require_pointers("divide", count, dst, dtype_size(dtype), dst, dtype_size(dtype));
  if (count == 0 && dtype_is_floating(dtype)) return;
  unary_float<DivBy>(dtype, dst, dst, count, divisor, stream, "divide");
}

bool can_cast(DType from, DType to) {
  const auto half = [](DType d) { return d == DType::f16 || d == DType::bf16; };
  return from == to || (from == DType::f32 && half(to)) || (half(from) && to == DType::f32);
}

void cast(DType to, void* dst, DType from, const void* src, std::int64_t count, cudaStream_t stream) {
  scaled_cast(to, dst, from, src, count, 1.0, stream);
}

void scaled_cast(DType to, void* dst, DType from, const void* src, std::int64_t count, double factor,
                 cudaStream_t stream) {
  require_pointers("cast", count, dst, dtype_size(to), src, dtype_size(from));
  if (!can_cast(from, to)) {
    raise(DT_ERR_UNSUPPORTED, std::string("cast: ") + dtype_name(from) + " to " + dtype_name(to) +
                                  " is not supported (f32 to and from f16 or bf16)");
  }
  if (to == from) {
    if (factor != 1.0) return scale(to, dst, src, count, factor, stream);
    if (count > 0 && dst != src) {
      check(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(count) * dtype_size(to), cudaMemcpyDeviceToDevice,
                            stream),
            "cast: cudaMemcpyAsync");
    }
    return;
  }
  auto* out16 = static_cast<std::uint16_t*>(dst);
  const auto* in16 = static_cast<const std::uint16_t*>(src);
  auto* out32 = static_cast<float*>(dst);
  const auto* in32 = static_cast<const float*>(src);
  const auto f = static_cast<float>(factor);
  if (from == DType::f32 && to == DType::f16) return map(out16, in32, count, F32ToHalf{f}, stream, "cast");
  if (from == DType::f32 && to == DType::bf16) return map(out16, in32, count, F32ToBf16{f}, stream, "cast");
  if (from == DType::f16) return map(out32, in16, count, HalfToF32{f}, stream, "cast");
  return map(out32, in16, count, Bf16ToF32{f}, stream, "cast");
}

void reduce(Reduction op, DType dtype, void* dst, const void* src, std::int64_t count, cudaStream_t stream) {
  require_pointers("reduce", count, dst, dtype_size(dtype), src, dtype_size(dtype));
  if (count == 0) return;
  switch (op) {
    case Reduction::sum: return reduce_as<Sum>(dtype, dst, src, count, stream, "reduce(sum)");
    case Reduction::prod: return reduce_as<Prod>(dtype, dst, src, count, stream, "reduce(prod)");
    case Reduction::max: return reduce_as<Max>(dtype, dst, src, count, stream, "reduce(max)");
    case Reduction::min: return reduce_as<Min>(dtype, dst, src, count, stream, "reduce(min)");
  }
  raise(DT_ERR_INVALID_ARGUMENT, "reduce: unknown reduction");
}

}  // namespace dtrain::device::cuda
