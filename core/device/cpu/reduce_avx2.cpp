// The reduction loops built with AVX2: twice the vector width of x86-64's
// baseline SSE2, for CPUs that have it (reduce.cpp picks them at run time).
//
// AVX2 is switched on here, after the shared headers, rather than for the
// whole file: an inline function those headers define (the f16/bf16
// conversions, std::bit_cast) that GCC emits out of line becomes one symbol
// that every object shares, and the linker keeps whichever copy it meets
// first. Compiled before the pragma, every copy runs on any x86-64 CPU; the
// loops below may still inline them.
#include <bit>
#include <cstdint>
#include <type_traits>

#include "base/dtype.hpp"
#include "device/cpu/half.hpp"
#include "device/cpu/reduce.hpp"

#pragma GCC target("avx2")

#include "device/cpu/reduce_loops.hpp"

namespace dtrain::device::cpu {

void combine_avx2(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count) {
  combine_loops(op, dtype, dst, a, b, count);
}

}  // namespace dtrain::device::cpu
