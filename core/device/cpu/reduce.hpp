// Element-wise reduction kernels on host memory: `dst = dst op src` for every
// dtype libdtrain accepts. f16 and bf16 are widened to f32, combined, and
// rounded once per element. Integer arithmetic wraps (two's complement), as
// it would in any MPI or NCCL implementation. Averaging is a sum followed by
// one division, done by the caller through divide().
#pragma once

#include <cstdint>

#include "base/dtype.hpp"

namespace dtrain::device::cpu {

enum class Reduction { sum, prod, max, min };

// dst[i] = dst[i] op src[i] for i in [0, count). dst and src must not
// overlap unless they are equal.
void reduce(Reduction op, DType dtype, void* dst, const void* src, std::int64_t count);

// dst[i] = a[i] op b[i] for i in [0, count). dst may be a or b; otherwise
// no two of them may overlap. The same bits as copying a to dst and then
// reducing b into it, in one pass.
void reduce(Reduction op, DType dtype, void* dst, const void* a, const void* b, std::int64_t count);

// dst[i] = dst[i] / divisor for a floating dtype (f16/bf16 computed in f32).
void divide(DType dtype, void* dst, std::int64_t count, double divisor);

}  // namespace dtrain::device::cpu
