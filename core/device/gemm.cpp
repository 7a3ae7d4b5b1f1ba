#include "device/gemm.hpp"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/cpu/gemm.hpp"
#include "device/gemm_call.hpp"
#ifdef DTRAIN_HAVE_CUDA
#include "device/cuda/blas.hpp"
#endif

namespace dtrain::device {

namespace {

[[noreturn]] void bad(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, "gemm: " + message); }

std::string str(std::int64_t v) { return std::to_string(v); }

// One operand as stored: rows x cols with row stride ld, batch matrices
// `stride` apart.
struct Stored {
  const char* name;
  std::int64_t rows, cols, ld, stride;

  // Elements from the first to one past the last the product reads or writes.
  std::int64_t extent(std::int64_t batch) const {
    if (batch == 0 || rows == 0 || cols == 0) return 0;
    return (batch - 1) * stride + (rows - 1) * ld + cols;
  }
};

void check_dimension(const char* name, std::int64_t value) {
  // BLAS and cuBLAS take int dimensions.
  if (value < 0 || value > INT_MAX) bad(std::string(name) + " = " + str(value) + " is outside 0.." + str(INT_MAX));
}

std::int64_t resolve_ld(const char* name, std::int64_t ld, std::int64_t cols) {
  if (ld == kPacked) return std::max<std::int64_t>(cols, 1);
  if (ld < std::max<std::int64_t>(cols, 1) || ld > INT_MAX) {
    bad(std::string(name) + " = " + str(ld) + " is shorter than its stored row of " + str(cols) +
        " elements or beyond " + str(INT_MAX));
  }
  return ld;
}

std::int64_t resolve_stride(const char* name, std::int64_t stride, std::int64_t rows, std::int64_t ld) {
  if (stride == kPacked) return rows * ld;
  if (stride < 0) bad(std::string(name) + " = " + str(stride) + " is negative");
  return stride;
}

void check_operand(const Stored& s, const TensorView& view, std::int64_t batch) {
  const std::int64_t needed = s.extent(batch);
  if (needed > view.count) {
    bad(std::string(s.name) + " holds " + str(view.count) + " elements; the shape reaches " + str(needed));
  }
}

bool overlap(const TensorView& x, std::int64_t x_elements, const TensorView& y, std::int64_t y_elements) {
  const auto* x0 = static_cast<const std::byte*>(x.data);
  const auto* y0 = static_cast<const std::byte*>(y.data);
  const std::size_t x_bytes = static_cast<std::size_t>(x_elements) * dtype_size(x.dtype);
  const std::size_t y_bytes = static_cast<std::size_t>(y_elements) * dtype_size(y.dtype);
  if (x_bytes == 0 || y_bytes == 0) return false;
  return x0 < y0 + y_bytes && y0 < x0 + x_bytes;
}

void check_dtypes(const TensorView& a, const TensorView& b, const TensorView& c) {
  if (a.dtype != DType::f32 && a.dtype != DType::f64 && a.dtype != DType::f16 && a.dtype != DType::bf16) {
    raise(DT_ERR_UNSUPPORTED, std::string("gemm: A is ") + dtype_name(a.dtype) + "; f32, f64, f16 or bf16 only");
  }
  if (b.dtype != a.dtype) bad(std::string("B is ") + dtype_name(b.dtype) + " and A " + dtype_name(a.dtype));
  const bool widened = a.dtype == DType::f16 || a.dtype == DType::bf16;
  if (c.dtype != a.dtype && !(widened && c.dtype == DType::f32)) {
    bad(std::string("C is ") + dtype_name(c.dtype) + " for " + dtype_name(a.dtype) + " inputs (" +
        dtype_name(a.dtype) + (widened ? " or f32" : "") + " expected)");
  }
}

void check_places(const TensorView& a, const TensorView& b, const TensorView& c) {
  if (!same_place(a, b) || !same_place(a, c)) {
    bad("A is " + place_name(a) + ", B " + place_name(b) + " and C " + place_name(c) + "; they must be together");
  }
}

// Checks everything and returns the call for the backend.
GemmCall checked_call(const GemmShape& shape, const TensorView& a, const TensorView& b, const TensorView& c) {
  check_dimension("m", shape.m);
  check_dimension("n", shape.n);
  check_dimension("k", shape.k);
  check_dimension("batch", shape.batch);
  check_dtypes(a, b, c);
  check_places(a, b, c);
  GemmCall call;
  call.shape = resolve_strides(shape);
  call.input = a.dtype;
  call.output = c.dtype;
  call.a = a.data;
  call.b = b.data;
  call.c = c.data;
  const GemmShape& s = call.shape;
  const Stored sa{"A", s.transpose_a ? s.k : s.m, s.transpose_a ? s.m : s.k, s.lda, s.stride_a};
  const Stored sb{"B", s.transpose_b ? s.n : s.k, s.transpose_b ? s.k : s.n, s.ldb, s.stride_b};
  const Stored sc{"C", s.m, s.n, s.ldc, s.stride_c};
  check_operand(sa, a, s.batch);
  check_operand(sb, b, s.batch);
  check_operand(sc, c, s.batch);
  if (s.batch > 1 && s.stride_c < sc.extent(1)) {
    bad("stride_c = " + str(s.stride_c) + " makes C's matrices overlap (each spans " + str(sc.extent(1)) +
        " elements)");
  }
  if (overlap(c, sc.extent(s.batch), a, sa.extent(s.batch)) || overlap(c, sc.extent(s.batch), b, sb.extent(s.batch))) {
    bad("C overlaps A or B");
  }
  return call;
}

#ifdef DTRAIN_HAVE_CUDA
void run(const GemmCall& call, const TensorView& c) {
  if (c.memory == Memory::cuda) {
    cuda::gemm(cuda::shared_blas_handles(), c.device_id, static_cast<cudaStream_t>(c.stream), call);
    return;
  }
  cpu::gemm(call);
}
#else
void run(const GemmCall& call, const TensorView& c) {
  if (c.memory == Memory::cuda) raise(DT_ERR_UNSUPPORTED, "gemm: this build has no CUDA support");
  cpu::gemm(call);
}
#endif

}  // namespace

GemmShape resolve_strides(const GemmShape& shape) {
  GemmShape s = shape;
  s.lda = resolve_ld("lda", s.lda, s.transpose_a ? s.m : s.k);
  s.ldb = resolve_ld("ldb", s.ldb, s.transpose_b ? s.k : s.n);
  s.ldc = resolve_ld("ldc", s.ldc, s.n);
  s.stride_a = resolve_stride("stride_a", s.stride_a, s.transpose_a ? s.k : s.m, s.lda);
  s.stride_b = resolve_stride("stride_b", s.stride_b, s.transpose_b ? s.n : s.k, s.ldb);
  s.stride_c = resolve_stride("stride_c", s.stride_c, s.m, s.ldc);
  return s;
}

void gemm(const GemmShape& shape, const TensorView& a, const TensorView& b, const TensorView& c) {
  run(checked_call(shape, a, b, c), c);
}

void gemm_batched(const GemmShape& shape, std::span<const TensorView> a, std::span<const TensorView> b,
                  std::span<const TensorView> c) {
  if (a.size() != b.size() || a.size() != c.size()) {
    bad("batched: " + str(static_cast<std::int64_t>(a.size())) + " A, " + str(static_cast<std::int64_t>(b.size())) +
        " B and " + str(static_cast<std::int64_t>(c.size())) + " C matrices");
  }
  GemmShape one = shape;
  one.batch = 1;
  one.stride_a = one.stride_b = one.stride_c = kPacked;
  std::vector<GemmCall> calls;
  calls.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) calls.push_back(checked_call(one, a[i], b[i], c[i]));
  // One product after another, on either device: cuBLAS's pointer-array
  // form would first need the pointers copied to the device.
  for (std::size_t i = 0; i < calls.size(); ++i) run(calls[i], c[i]);
}

}  // namespace dtrain::device
