// The reduction loops with the build's own instruction set: every CPU runs them.
#include "device/cpu/reduce_loops.hpp"

namespace dtrain::device::cpu {

void combine_generic(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count) {
  combine_loops(op, dtype, dst, a, b, count);
}

}  // namespace dtrain::device::cpu
