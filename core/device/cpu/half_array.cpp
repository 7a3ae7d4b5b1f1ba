#include "device/cpu/half_array.hpp"

#include <cstring>

#include "device/cpu/half.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace dtrain::device::cpu {

namespace {

// The same arithmetic as scaled_copy's other dtypes: widen, then scale; scale,
// then narrow. The loops vectorise at -O3 (CMakeLists.txt).
void widen_portable(const std::uint16_t* src, float* dst, std::int64_t count, float scale) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = half_to_float(src[i]) * scale;
}

void narrow_portable(const float* src, std::uint16_t* dst, std::int64_t count, float scale) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = float_to_half(src[i] * scale);
}

#if defined(__x86_64__)
// Compiled for F16C and AVX function by function, so the library needs
// neither, and called only where __builtin_cpu_supports says the CPU has
// both. The canonical NaN replaces a NaN lane before the scale is applied
// (widening) or after (narrowing), where half.hpp's functions produce it, so
// a NaN that the multiply makes (infinity times zero) is the multiply's in
// both paths. The NaN lanes are selected with and/andnot/or: GCC 12 turns
// _mm256_blendv_ps on a compare into scalar branches in a target("avx")
// function.

constexpr int kLanes = 8;

__attribute__((target("avx,f16c"))) void widen8(const std::uint16_t* in, float* out, __m256 factor) {
  const __m256 wide = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
  const __m256 nan = _mm256_cmp_ps(wide, wide, _CMP_UNORD_Q);
  const __m256 canonical = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kCanonicalNanF32)));
  const __m256 fixed = _mm256_or_ps(_mm256_andnot_ps(nan, wide), _mm256_and_ps(nan, canonical));
  _mm256_storeu_ps(out, _mm256_mul_ps(fixed, factor));
}

__attribute__((target("avx,f16c"))) void narrow8(const float* in, std::uint16_t* out, __m256 factor) {
  const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(in), factor);
  // Rounding from the immediate (nearest even), whatever MXCSR says.
  const __m128i halves = _mm256_cvtps_ph(scaled, _MM_FROUND_TO_NEAREST_INT);
  // The NaN mask's 32-bit lanes (all ones or all zeros) packed to 16 bits.
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(scaled, scaled, _CMP_UNORD_Q));
  const __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extractf128_si256(nan, 1));
  const __m128i canonical = _mm_set1_epi16(static_cast<short>(kCanonicalNan16));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_or_si128(_mm_andnot_si128(nan16, halves), _mm_and_si128(nan16, canonical)));
}

// Eight elements at a time; the last count % 8 go through the same
// instructions by way of a zeroed block of eight.
template <typename In, typename Out, void (*Eight)(const In*, Out*, __m256)>
__attribute__((target("avx,f16c"))) void by_eights(const In* src, Out* dst, std::int64_t count, float scale) {
  const __m256 factor = _mm256_set1_ps(scale);
  std::int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) Eight(src + i, dst + i, factor);
  if (i == count) return;
  const auto rest = static_cast<std::size_t>(count - i);
  In in[kLanes] = {};
  Out out[kLanes];
  std::memcpy(in, src + i, rest * sizeof *in);
  Eight(in, out, factor);
  std::memcpy(dst + i, out, rest * sizeof *out);
}

constexpr HalfLoops kF16c{by_eights<std::uint16_t, float, widen8>, by_eights<float, std::uint16_t, narrow8>};
#endif

constexpr HalfLoops kPortable{widen_portable, narrow_portable};

const HalfLoops& fastest() {
  const HalfLoops* f16c = f16c_half_loops();
  return f16c != nullptr ? *f16c : kPortable;
}

}  // namespace

const HalfLoops& portable_half_loops() { return kPortable; }

const HalfLoops* f16c_half_loops() {
#if defined(__x86_64__)
  __builtin_cpu_init();  // in case this runs before libgcc's constructors
  if (__builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c")) return &kF16c;
#endif
  return nullptr;
}

void halves_to_floats(const std::uint16_t* src, float* dst, std::int64_t count, float scale) {
  static const HalfLoops& loops = fastest();
  loops.widen(src, dst, count, scale);
}

void floats_to_halves(const float* src, std::uint16_t* dst, std::int64_t count, float scale) {
  static const HalfLoops& loops = fastest();
  loops.narrow(src, dst, count, scale);
}

}  // namespace dtrain::device::cpu
