// Copies between the floating dtypes with a scale folded in: how a gradient
// enters its bucket (cast to the wire type and pre-divided) and how the
// reduced values return. One pass over the data either way.
#pragma once

#include <cstdint>

#include "base/dtype.hpp"

namespace dtrain::parallel::ddp {

// dst[i] = src[i] * scale, computed in f64 when either side is f64 and in
// f32 otherwise; 16-bit results round to nearest even. Both dtypes must be
// floating; the buffers must not overlap.
void scaled_copy(DType src_dtype, const void* src, DType dst_dtype, void* dst, std::int64_t count, double scale);

}  // namespace dtrain::parallel::ddp
