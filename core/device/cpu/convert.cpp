#include "device/cpu/convert.hpp"

#include <cstring>
#include <type_traits>

#include "base/error.hpp"
#include "device/cpu/half.hpp"
#include "device/cpu/half_array.hpp"

namespace dtrain::device::cpu {

namespace {

// Tag types for the two 16-bit formats, which share a storage type.
struct Half;
struct BFloat;

template <typename T> struct Storage { using type = T; };
template <> struct Storage<Half> { using type = std::uint16_t; };
template <> struct Storage<BFloat> { using type = std::uint16_t; };

template <typename Compute, typename T>
Compute load(const typename Storage<T>::type& value) {
  if constexpr (std::is_same_v<T, Half>) {
    return static_cast<Compute>(half_to_float(value));
  } else if constexpr (std::is_same_v<T, BFloat>) {
    return static_cast<Compute>(bf16_to_float(value));
  } else {
    return static_cast<Compute>(value);
  }
}

template <typename T, typename Compute>
typename Storage<T>::type store(Compute value) {
  if constexpr (std::is_same_v<T, Half>) {
    return float_to_half(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, BFloat>) {
    return float_to_bf16(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <typename S, typename D>
void copy_loop(const void* src, void* dst, std::int64_t count, double scale) {
  // f16 to and from f32, the wire format of compressed gradients, use the
  // hardware's conversions where the CPU has them.
  if constexpr (std::is_same_v<S, Half> && std::is_same_v<D, float>) {
    halves_to_floats(static_cast<const std::uint16_t*>(src), static_cast<float*>(dst), count,
                     static_cast<float>(scale));
  } else if constexpr (std::is_same_v<S, float> && std::is_same_v<D, Half>) {
    floats_to_halves(static_cast<const float*>(src), static_cast<std::uint16_t*>(dst), count,
                     static_cast<float>(scale));
  } else {
    using Compute = std::conditional_t<std::is_same_v<S, double> || std::is_same_v<D, double>, double, float>;
    const auto* in = static_cast<const typename Storage<S>::type*>(src);
    auto* out = static_cast<typename Storage<D>::type*>(dst);
    const auto factor = static_cast<Compute>(scale);
    for (std::int64_t i = 0; i < count; ++i) out[i] = store<D>(load<Compute, S>(in[i]) * factor);
  }
}

template <typename S>
void copy_from(DType dst_dtype, const void* src, void* dst, std::int64_t count, double scale) {
  switch (dst_dtype) {
    case DType::f32: return copy_loop<S, float>(src, dst, count, scale);
    case DType::f64: return copy_loop<S, double>(src, dst, count, scale);
    case DType::f16: return copy_loop<S, Half>(src, dst, count, scale);
    case DType::bf16: return copy_loop<S, BFloat>(src, dst, count, scale);
    default: break;
  }
  raise(DT_ERR_INTERNAL, std::string("scaled_copy to ") + dtype_name(dst_dtype));
}

}  // namespace

void scaled_copy(DType src_dtype, const void* src, DType dst_dtype, void* dst, std::int64_t count, double scale) {
  if (count == 0) return;
  if (src_dtype == dst_dtype && scale == 1.0) {
    std::memcpy(dst, src, static_cast<std::size_t>(count) * dtype_size(src_dtype));
    return;
  }
  switch (src_dtype) {
    case DType::f32: return copy_from<float>(dst_dtype, src, dst, count, scale);
    case DType::f64: return copy_from<double>(dst_dtype, src, dst, count, scale);
    case DType::f16: return copy_from<Half>(dst_dtype, src, dst, count, scale);
    case DType::bf16: return copy_from<BFloat>(dst_dtype, src, dst, count, scale);
    default: break;
  }
  raise(DT_ERR_INTERNAL, std::string("scaled_copy from ") + dtype_name(src_dtype));
}

}  // namespace dtrain::device::cpu
