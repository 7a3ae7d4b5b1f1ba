// Copies between the floating dtypes with a scale folded in, in one pass over
// the data: how a gradient enters a reduction bucket (cast to the wire type
// and pre-divided) and how the reduced values return, and how f32 master
// weights are written back into parameters of their own dtype.
#pragma once

#include <cstdint>

#include "base/dtype.hpp"

namespace dtrain::device::cpu {

// dst[i] = src[i] * scale, computed in f64 when either side is f64 and in
// f32 otherwise; 16-bit results round to nearest even. Both dtypes must be
// floating; the buffers must not overlap.
void scaled_copy(DType src_dtype, const void* src, DType dst_dtype, void* dst, std::int64_t count, double scale);

}  // namespace dtrain::device::cpu
