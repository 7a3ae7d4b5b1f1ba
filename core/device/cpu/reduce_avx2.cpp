// The reduction loops built with AVX2: twice the vector width of x86-64's
// baseline SSE2, for CPUs that have it (reduce.cpp picks them at run time).
// reduce_loops.hpp turns AVX2 on after its includes, and says why.
#define DTRAIN_REDUCE_LOOPS_WITH_AVX2
#include "device/cpu/reduce_loops.hpp"

namespace dtrain::device::cpu {

void combine_avx2(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count) {
  combine_loops(op, dtype, dst, a, b, count);
}

}  // namespace dtrain::device::cpu
