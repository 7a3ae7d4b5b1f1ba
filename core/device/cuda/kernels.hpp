// Element-wise CUDA kernels on device memory, queued on a stream. They mirror
// the CPU kernels (device/cpu/reduce.hpp) element for element: f16 and bf16
// are widened to f32, computed, and rounded once; integer arithmetic wraps.
// Counts are elements; count 0 queues nothing. Pointers must be aligned to
// their element size. Arguments are checked on the host (throwing
// DT_ERR_INVALID_ARGUMENT or DT_ERR_UNSUPPORTED before anything is queued);
// launch failures throw with CUDA's error text. Each kernel reads and writes
// 16 bytes per access where the pointers allow it.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "base/dtype.hpp"
#include "device/cpu/reduce.hpp"

namespace dtrain::device::cuda {

using cpu::Reduction;

// dst[i] = value converted to `dtype` (f16/bf16 rounded to nearest even;
// integers must be representable: DT_ERR_INVALID_ARGUMENT otherwise).
void fill(DType dtype, void* dst, std::int64_t count, double value, cudaStream_t stream);

// dst[i] = src[i] * factor, for a floating dtype (factor rounded to f32 for
// f32, f16 and bf16). dst == src is allowed.
void scale(DType dtype, void* dst, const void* src, std::int64_t count, double factor, cudaStream_t stream);

// dst[i] = dst[i] / divisor, for a floating dtype; what averaging does after a
// sum, exactly as cpu::divide.
void divide(DType dtype, void* dst, std::int64_t count, double divisor, cudaStream_t stream);

// Whether cast() and scaled_cast() take `from` to `to`: f32 to and from
// f16 or bf16, and any dtype to itself.
bool can_cast(DType from, DType to);

// dst[i] = src[i] converted from `from` to `to`: f32 -> f16/bf16 and back,
// or a copy when the dtypes are equal. Other pairs: DT_ERR_UNSUPPORTED.
void cast(DType to, void* dst, DType from, const void* src, std::int64_t count, cudaStream_t stream);

// dst[i] = src[i] * factor converted from `from` to `to` (the pairs cast()
// takes), computed in f32 (f64 for f64) and rounded once, as
// cpu::scaled_copy does. dst == src only when the dtypes are equal.
void scaled_cast(DType to, void* dst, DType from, const void* src, std::int64_t count, double factor,
                 cudaStream_t stream);

// dst[i] = dst[i] op src[i], every dtype; dst and src equal or disjoint.
void reduce(Reduction op, DType dtype, void* dst, const void* src, std::int64_t count, cudaStream_t stream);

namespace detail {
// fill()'s kernel: every `width`-byte element of dst set to the low bytes of `bits`.
void fill_bits(std::size_t width, void* dst, std::int64_t count, std::uint64_t bits, cudaStream_t stream);
}  // namespace detail

}  // namespace dtrain::device::cuda
