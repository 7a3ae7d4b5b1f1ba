// fill(): the value converted on the host (with the CPU's conversions, so a
// filled f16/bf16 element is what the CPU would store), then one kernel
// writes its bits everywhere.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "base/error.hpp"
#include "device/cpu/half.hpp"
#include "device/cuda/kernels.hpp"

namespace dtrain::device::cuda {

namespace {

template <typename T>
std::uint64_t integer_bits(double value, DType dtype) {
  if (!(value >= static_cast<double>(std::numeric_limits<T>::min()) &&
        value <= static_cast<double>(std::numeric_limits<T>::max())) ||
      value != std::trunc(value)) {
    raise(DT_ERR_INVALID_ARGUMENT, "fill: " + std::to_string(value) + " is not a " + dtype_name(dtype) + " value");
  }
  using U = std::make_unsigned_t<T>;
  return static_cast<U>(static_cast<T>(value));
}

std::uint64_t element_bits(DType dtype, double value) {
  switch (dtype) {
    case DType::f32: {
      std::uint32_t bits;
      const float v = static_cast<float>(value);
      std::memcpy(&bits, &v, sizeof bits);
      return bits;
    }
    case DType::f64: {
      std::uint64_t bits;
      std::memcpy(&bits, &value, sizeof bits);
      return bits;
    }
    case DType::f16: return cpu::float_to_half(static_cast<float>(value));
    case DType::bf16: return cpu::float_to_bf16(static_cast<float>(value));
    case DType::i32: return integer_bits<std::int32_t>(value, dtype);
    case DType::i64: return integer_bits<std::int64_t>(value, dtype);
    case DType::i8: return integer_bits<std::int8_t>(value, dtype);
    case DType::u8: return integer_bits<std::uint8_t>(value, dtype);
  }
  raise(DT_ERR_INTERNAL, "fill: unknown dtype");
}

}  // namespace

void fill(DType dtype, void* dst, std::int64_t count, double value, cudaStream_t stream) {
  if (count < 0) raise(DT_ERR_INVALID_ARGUMENT, "fill: count " + std::to_string(count) + " is negative");
  const std::uint64_t bits = element_bits(dtype, value);  // checks the value even for count 0
  if (count == 0) return;
  if (dst == nullptr) raise(DT_ERR_INVALID_ARGUMENT, "fill: NULL pointer with " + std::to_string(count) + " elements");
  detail::fill_bits(dtype_size(dtype), dst, count, bits, stream);
}

}  // namespace dtrain::device::cuda
