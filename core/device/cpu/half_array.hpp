// Whole arrays between f32 and f16, with a scale folded in: the bulk of
// scaled_copy (a gradient cast into an f16 reduction bucket and back). On
// x86-64 CPUs with F16C the hardware converts eight elements per
// instruction (vcvtps2ph rounds to nearest even as CUDA does; vcvtph2ps is
// exact); a compare and a blend then turn every NaN lane into the canonical
// NaN of device/cpu/half.hpp, whose results these are bit for bit on every
// path. Elsewhere the portable loops apply half.hpp element by element.
// (Bit for bit in the default floating-point environment: a caller that
// turns on flush-to-zero changes half.hpp's subnormals, which it computes
// with float arithmetic, and not F16C's.)
//
// bf16 has no F16C instruction and stays with half.hpp's loops: AVX512-BF16's
// vcvtneps2bf16 flushes subnormal inputs to zero, which CUDA does not, so it
// would need a fix-up of its own for a CPU family few machines have.
#pragma once

#include <cstdint>

namespace dtrain::device::cpu {

// dst[i] = half_to_float(src[i]) * scale, for i < count.
void halves_to_floats(const std::uint16_t* src, float* dst, std::int64_t count, float scale);
// dst[i] = float_to_half(src[i] * scale), for i < count.
void floats_to_halves(const float* src, std::uint16_t* dst, std::int64_t count, float scale);

// One implementation of the two calls above. The calls use f16c_half_loops()
// where there is one and portable_half_loops() otherwise; tests and dtbench
// name one to compare them.
struct HalfLoops {
  void (*widen)(const std::uint16_t* src, float* dst, std::int64_t count, float scale);
  void (*narrow)(const float* src, std::uint16_t* dst, std::int64_t count, float scale);
};
const HalfLoops& portable_half_loops();
// nullptr where this CPU lacks F16C or AVX (or is not x86-64).
const HalfLoops* f16c_half_loops();

}  // namespace dtrain::device::cpu
