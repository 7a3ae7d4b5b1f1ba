// The reduction loops built with AVX2 (see CMakeLists.txt): twice the vector
// width of x86-64's baseline SSE2, for CPUs that have it.
#include "device/cpu/reduce_loops.hpp"

namespace dtrain::device::cpu {

void combine_avx2(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count) {
  combine_loops(op, dtype, dst, a, b, count);
}

}  // namespace dtrain::device::cpu
