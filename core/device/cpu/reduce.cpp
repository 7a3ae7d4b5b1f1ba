#include "device/cpu/reduce.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "base/error.hpp"
#include "device/cpu/half.hpp"

// The loops below are plain element-wise loops over restrict pointers so that
// GCC vectorises them at -O3 (this file is always built at -O3, see
// CMakeLists.txt). Integer sums and products go through the unsigned type of
// the same width: wrapping is then defined behaviour and vectorises the same.

namespace dtrain::device::cpu {

namespace {

template <typename T, bool = std::is_integral_v<T>>
struct WideOf {
  using type = T;
};
template <typename T>
struct WideOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using Wide = typename WideOf<T>::type;

template <typename T>
struct Sum {
  static T apply(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)); }
};
template <typename T>
struct Prod {
  static T apply(T a, T b) {
    // u8/i8/i16 multiply would promote to int and could overflow it; unsigned
    // int arithmetic is wide enough for every operand width used here.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Wide<T>>;
    return static_cast<T>(static_cast<U>(static_cast<Wide<T>>(a)) * static_cast<U>(static_cast<Wide<T>>(b)));
  }
};
template <typename T>
struct Max {
  static T apply(T a, T b) { return b > a ? b : a; }
};
template <typename T>
struct Min {
  static T apply(T a, T b) { return b < a ? b : a; }
};

template <typename Op, typename T>
void loop(T* __restrict dst, const T* __restrict src, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = Op::apply(dst[i], src[i]);
}

// 16-bit floats: widen, combine in f32, round once.
template <typename Op, float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
void loop16(std::uint16_t* __restrict dst, const std::uint16_t* __restrict src, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = Narrow(Op::apply(Widen(dst[i]), Widen(src[i])));
}

template <template <typename> class Op>
void dispatch(DType dtype, void* dst, const void* src, std::int64_t count) {
  switch (dtype) {
    case DType::f32:
      return loop<Op<float>>(static_cast<float*>(dst), static_cast<const float*>(src), count);
    case DType::f64:
      return loop<Op<double>>(static_cast<double*>(dst), static_cast<const double*>(src), count);
    case DType::f16:
      return loop16<Op<float>, half_to_float, float_to_half>(static_cast<std::uint16_t*>(dst),
                                                             static_cast<const std::uint16_t*>(src), count);
    case DType::bf16:
      return loop16<Op<float>, bf16_to_float, float_to_bf16>(static_cast<std::uint16_t*>(dst),
                                                             static_cast<const std::uint16_t*>(src), count);
    case DType::i32:
      return loop<Op<std::int32_t>>(static_cast<std::int32_t*>(dst), static_cast<const std::int32_t*>(src),
                                    count);
    case DType::i64:
      return loop<Op<std::int64_t>>(static_cast<std::int64_t*>(dst), static_cast<const std::int64_t*>(src),
                                    count);
    case DType::i8:
      return loop<Op<std::int8_t>>(static_cast<std::int8_t*>(dst), static_cast<const std::int8_t*>(src), count);
    case DType::u8:
      return loop<Op<std::uint8_t>>(static_cast<std::uint8_t*>(dst), static_cast<const std::uint8_t*>(src),
                                    count);
  }
}

template <typename T>
void divide_loop(T* __restrict dst, std::int64_t count, T divisor) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = dst[i] / divisor;
}

template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(float)>
void divide_loop16(std::uint16_t* __restrict dst, std::int64_t count, float divisor) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = Narrow(Widen(dst[i]) / divisor);
}

}  // namespace

void reduce(Reduction op, DType dtype, void* dst, const void* src, std::int64_t count) {
  if (count <= 0) return;
  if (dst == src) {
    // x op x is x for max and min; the others combine with a copy, which
    // keeps the loops' no-aliasing contract.
    if (op == Reduction::max || op == Reduction::min) return;
    const std::size_t bytes = static_cast<std::size_t>(count) * dtype_size(dtype);
    auto copy = std::make_unique_for_overwrite<unsigned char[]>(bytes);
    std::memcpy(copy.get(), src, bytes);
    reduce(op, dtype, dst, copy.get(), count);
    return;
  }
  switch (op) {
    case Reduction::sum: return dispatch<Sum>(dtype, dst, src, count);
    case Reduction::prod: return dispatch<Prod>(dtype, dst, src, count);
    case Reduction::max: return dispatch<Max>(dtype, dst, src, count);
    case Reduction::min: return dispatch<Min>(dtype, dst, src, count);
  }
}

void divide(DType dtype, void* dst, std::int64_t count, double divisor) {
  if (count <= 0) return;
  switch (dtype) {
    case DType::f32: return divide_loop(static_cast<float*>(dst), count, static_cast<float>(divisor));
    case DType::f64: return divide_loop(static_cast<double*>(dst), count, divisor);
    case DType::f16:
      return divide_loop16<half_to_float, float_to_half>(static_cast<std::uint16_t*>(dst), count,
                                                         static_cast<float>(divisor));
    case DType::bf16:
      return divide_loop16<bf16_to_float, float_to_bf16>(static_cast<std::uint16_t*>(dst), count,
                                                         static_cast<float>(divisor));
    default:
      raise(DT_ERR_INTERNAL, std::string("divide: ") + dtype_name(dtype) + " is not a floating dtype");
  }
}

}  // namespace dtrain::device::cpu
