// Test helper: attention over a whole sequence in double, forward and
// backward, written from the formulas in dtrain/cp.h and sharing no code with
// the library, so that blockwise and ring attention are checked against an
// independent reference. Also the tensors the tests feed both with: host
// memory, or (built with DTRAIN_TEST_ON_GPU) a CUDA device.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtrain.h"
#ifdef DTRAIN_TEST_ON_GPU
#include <cstdlib>

#include <cuda_runtime_api.h>
#endif

namespace dtrain::testing {

struct AttentionCase {
  std::int64_t seq = 0;  // tokens (of the whole sequence, or of a block)
  std::int64_t kv_seq = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  bool causal = false;
  double scale = 0.0;
};

struct ReferenceResult {
  std::vector<double> o, lse, dq, dk, dv;
};

// Attention of q [seq, q_heads, d] against k, v [kv_seq, kv_heads, d], with
// key j visible to query i when not causal or k_pos[j] <= q_pos[i]; with
// d_o given, also the gradients.
inline ReferenceResult reference_attention(const AttentionCase& c, const std::vector<float>& q,
                                           const std::vector<float>& k, const std::vector<float>& v,
                                           const std::vector<std::int64_t>& q_pos,
                                           const std::vector<std::int64_t>& k_pos, const std::vector<float>& d_o) {
  const std::int64_t d = c.head_dim;
  const std::int64_t group = c.q_heads / c.kv_heads;
  auto qi = [&](std::int64_t i, std::int64_t h, std::int64_t x) { return (i * c.q_heads + h) * d + x; };
  auto ki = [&](std::int64_t j, std::int64_t h, std::int64_t x) { return (j * c.kv_heads + h / group) * d + x; };
  ReferenceResult r;
  r.o.assign(q.size(), 0.0);
  r.lse.assign(static_cast<std::size_t>(c.seq * c.q_heads), -std::numeric_limits<double>::infinity());
  r.dq.assign(q.size(), 0.0);
  r.dk.assign(k.size(), 0.0);
  r.dv.assign(k.size(), 0.0);
  std::vector<double> p(static_cast<std::size_t>(c.kv_seq));
  for (std::int64_t i = 0; i < c.seq; ++i) {
    for (std::int64_t h = 0; h < c.q_heads; ++h) {
      double top = -std::numeric_limits<double>::infinity();
      std::vector<bool> seen(static_cast<std::size_t>(c.kv_seq));
      for (std::int64_t j = 0; j < c.kv_seq; ++j) {
        seen[j] = !c.causal || k_pos[j] <= q_pos[i];
        double s = 0;
        for (std::int64_t x = 0; x < d; ++x) s += double(q[qi(i, h, x)]) * double(k[ki(j, h, x)]);
        p[j] = s * c.scale;
        if (seen[j]) top = std::max(top, p[j]);
      }
      if (top == -std::numeric_limits<double>::infinity()) continue;
      double sum = 0;
      for (std::int64_t j = 0; j < c.kv_seq; ++j) {
        p[j] = seen[j] ? std::exp(p[j] - top) : 0.0;
        sum += p[j];
      }
      r.lse[i * c.q_heads + h] = top + std::log(sum);
      for (std::int64_t j = 0; j < c.kv_seq; ++j) {
        p[j] /= sum;
        for (std::int64_t x = 0; x < d; ++x) r.o[qi(i, h, x)] += p[j] * double(v[ki(j, h, x)]);
      }
      if (d_o.empty()) continue;
      // dP = dO V^T; dS = P (dP - rowsum(dO * O)); dQ = scale dS K; dK = scale dS^T Q; dV = P^T dO.
      double row_dot = 0;
      for (std::int64_t x = 0; x < d; ++x) row_dot += double(d_o[qi(i, h, x)]) * r.o[qi(i, h, x)];
      for (std::int64_t j = 0; j < c.kv_seq; ++j) {
        double dp = 0;
        for (std::int64_t x = 0; x < d; ++x) dp += double(d_o[qi(i, h, x)]) * double(v[ki(j, h, x)]);
        const double ds = p[j] * (dp - row_dot) * c.scale;
        for (std::int64_t x = 0; x < d; ++x) {
          r.dq[qi(i, h, x)] += ds * double(k[ki(j, h, x)]);
          r.dk[ki(j, h, x)] += ds * double(q[qi(i, h, x)]);
          r.dv[ki(j, h, x)] += p[j] * double(d_o[qi(i, h, x)]);
        }
      }
    }
  }
  return r;
}

// The positions rank r of cp holds in a sequence of `seq` tokens, from the
// description of the layouts in dtrain/cp.h.
inline std::vector<std::int64_t> layout_positions(dt_cp_layout layout, int cp, int r, std::int64_t seq) {
  std::vector<std::int64_t> out;
  if (layout == DT_CP_CONTIGUOUS) {
    for (std::int64_t t = r * seq / cp; t < (r + 1) * seq / cp; ++t) out.push_back(t);
    return out;
  }
  const std::int64_t chunk = seq / (2 * cp);
  for (std::int64_t c : {std::int64_t{r}, std::int64_t{2 * cp - 1 - r}}) {
    for (std::int64_t t = c * chunk; t < (c + 1) * chunk; ++t) out.push_back(t);
  }
  return out;
}

// The rows at `positions` of a [seq, row] array.
template <typename T>
std::vector<T> rows_at(const std::vector<T>& full, const std::vector<std::int64_t>& positions, std::int64_t row) {
  std::vector<T> out;
  for (std::int64_t p : positions) out.insert(out.end(), full.begin() + p * row, full.begin() + (p + 1) * row);
  return out;
}

// Uniform in [-1, 1), the same on every rank for the same seed.
inline std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  std::vector<float> values(n);
  for (auto& x : values) x = uniform(generator);
  return values;
}

#ifdef DTRAIN_TEST_ON_GPU
// The CUDA device of this rank's tensors: its local rank's, modulo the
// devices there are.
inline int test_device() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return 0;
  const char* local = std::getenv("DTRAIN_LOCAL_RANK");
  return (local != nullptr ? std::atoi(local) : 0) % devices;
}

inline void cuda_ok(cudaError_t error, const char* what) {
  if (error != cudaSuccess) ADD_FAILURE() << what << ": " << cudaGetErrorString(error);
}

#endif

// A DLTensor over a vector the caller keeps alive (with its shape). Built
// with DTRAIN_TEST_ON_GPU, the tensor is a copy of the vector on
// test_device(), copied back into the vector when the TensorOf goes.
template <typename T>
struct TensorOf {
  std::vector<std::int64_t> shape;
  DLTensor tensor{};

  // float holds float32 and std::int64_t int64; std::uint16_t holds the
  // bits of float16 or bfloat16, which `dtype` then says.
  TensorOf(std::vector<T>& data, std::vector<std::int64_t> dims, DLDataType dtype = natural_dtype())
      : shape(std::move(dims)), host_(data) {
    tensor.data = data.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int>(shape.size());
    tensor.dtype = dtype;
    tensor.shape = shape.data();
#ifdef DTRAIN_TEST_ON_GPU
    const int device = test_device();
    cuda_ok(cudaSetDevice(device), "cudaSetDevice");
    cuda_ok(cudaMalloc(&tensor.data, bytes()), "cudaMalloc");
    cuda_ok(cudaMemcpy(tensor.data, data.data(), bytes(), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    tensor.device = {kDLCUDA, device};
#endif
  }
#ifdef DTRAIN_TEST_ON_GPU
  ~TensorOf() {
    cuda_ok(cudaMemcpy(host_.data(), tensor.data, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    cuda_ok(cudaFree(tensor.data), "cudaFree");
  }
#endif
  TensorOf(const TensorOf&) = delete;
  DLTensor* get() { return &tensor; }

 private:
  static DLDataType natural_dtype() {
    return std::is_same_v<T, float> ? DLDataType{kDLFloat, 32, 1} : DLDataType{kDLInt, 64, 1};
  }
  std::size_t bytes() const { return host_.size() * sizeof(T); }

  std::vector<T>& host_;
};

// 16-bit floats for the half-precision tests, written from the formats
// (IEEE binary16; bfloat16, the top half of a float32), sharing no code
// with the library.
constexpr DLDataType kFloat16{kDLFloat, 16, 1};
constexpr DLDataType kBfloat16{kDLBfloat, 16, 1};

inline std::uint32_t bits_of(float x) {
  std::uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline float from_bits(std::uint32_t b) {
  float x = 0;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// `x` in the 16-bit format `dtype`; exact for the values the tests use
// (multiples of 1/128 in [-1, 1], which both formats hold).
inline std::uint16_t to_16_bits(DLDataType dtype, float x) {
  const std::uint32_t b = bits_of(x);
  if (dtype.code == kDLBfloat) return static_cast<std::uint16_t>(b >> 16);
  const std::uint32_t sign = (b >> 16) & 0x8000U;
  if ((b & 0x7fffffffU) == 0) return static_cast<std::uint16_t>(sign);
  const std::int32_t exponent = static_cast<std::int32_t>((b >> 23) & 0xffU) - 127 + 15;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) | ((b >> 13) & 0x3ffU));
}

inline float from_16_bits(DLDataType dtype, std::uint16_t h) {
  if (dtype.code == kDLBfloat) return from_bits(static_cast<std::uint32_t>(h) << 16);
  const float sign = (h & 0x8000U) != 0 ? -1.0F : 1.0F;
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  if (exponent == 0x1f) return sign * (mantissa == 0 ? std::numeric_limits<float>::infinity()
                                                     : std::numeric_limits<float>::quiet_NaN());
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
}

inline std::vector<std::uint16_t> to_16_bits(DLDataType dtype, const std::vector<float>& values) {
  std::vector<std::uint16_t> out;
  for (float x : values) out.push_back(to_16_bits(dtype, x));
  return out;
}

inline std::vector<float> from_16_bits(DLDataType dtype, const std::vector<std::uint16_t>& values) {
  std::vector<float> out;
  for (std::uint16_t h : values) out.push_back(from_16_bits(dtype, h));
  return out;
}

// Multiples of 1/128 in [-1, 1]: values both 16-bit formats hold exactly.
inline std::vector<float> on_16_bit_grid(std::vector<float> values) {
  for (float& x : values) x = std::round(x * 128.0F) / 128.0F;
  return values;
}

// Half a unit in the last place of the 16-bit format, relative: the bound of
// rounding a float32 result to it once.
inline double half_ulp(DLDataType dtype) { return dtype.code == kDLBfloat ? 1.0 / 256 : 1.0 / 2048; }

// The largest difference from the reference stays within `relative` times
// the reference's largest magnitude.
inline void expect_close(const std::vector<float>& got, const std::vector<double>& want, double relative,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0, worst = 0;
  std::size_t worst_at = 0;
  for (std::size_t e = 0; e < want.size(); ++e) {
    if (std::isinf(want[e])) {
      EXPECT_EQ(double(got[e]), want[e]) << what << " at " << e;
      continue;
    }
    scale = std::max(scale, std::abs(want[e]));
    if (std::abs(got[e] - want[e]) > worst) {
      worst = std::abs(got[e] - want[e]);
      worst_at = e;
    }
  }
  EXPECT_LE(worst, relative * std::max(scale, 1e-30))
      << what << ": element " << worst_at << " is " << got[worst_at] << ", reference " << want[worst_at];
}

}  // namespace dtrain::testing
