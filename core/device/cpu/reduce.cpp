#include "device/cpu/reduce.hpp"

#include <string>

#include "base/error.hpp"
#include "device/cpu/half.hpp"
#include "device/cpu/reduce_loops.hpp"

// The reduction loops are in reduce_loops.hpp, built once per instruction
// set; this file picks the widest the CPU has. The division loops are plain
// element-wise loops that GCC vectorises at -O3 (see CMakeLists.txt).

namespace dtrain::device::cpu {

namespace {

using Loops = void (*)(Reduction, DType, void*, const void*, const void*, std::int64_t);

// The widest loops this CPU runs.
Loops widest_loops() {
#ifdef DTRAIN_REDUCE_AVX2
  __builtin_cpu_init();  // in case the first reduction runs before libgcc's constructors
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) return combine_avx2;
#endif
  return combine_generic;
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

void reduce(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count) {
  if (count <= 0) return;
  static const Loops loops = widest_loops();
  loops(op, dtype, dst, a, b, count);
}

void reduce(Reduction op, DType dtype, void* dst, const void* src, std::int64_t count) {
  reduce(op, dtype, dst, dst, src, count);
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
