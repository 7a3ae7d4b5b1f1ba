// Test helper: small row-major matrices, in double for references and in
// f32 (with the DLTensor describing them) for the library, plus the dense
// math the tensor-parallel layers must reproduce. Values come from a seeded
// generator, so every rank builds the same full matrices.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <dlpack/dlpack.h>

namespace dtrain::testing {

struct Dense {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Dense() = default;
  Dense(std::int64_t r, std::int64_t c) : rows(r), cols(c), v(static_cast<std::size_t>(r * c), 0.0) {}
  double& at(std::int64_t r, std::int64_t c) { return v[static_cast<std::size_t>(r * cols + c)]; }
  double at(std::int64_t r, std::int64_t c) const { return v[static_cast<std::size_t>(r * cols + c)]; }
};

inline Dense random_dense(std::int64_t rows, std::int64_t cols, unsigned seed, double scale = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  Dense d(rows, cols);
  for (auto& x : d.v) x = static_cast<float>(dist(gen));  // representable in f32
  return d;
}

// a [m, k] times b [k, n], or with either transposed as stored.
inline Dense matmul(const Dense& a, const Dense& b, bool ta = false, bool tb = false) {
  const std::int64_t m = ta ? a.cols : a.rows, k = ta ? a.rows : a.cols, n = tb ? b.rows : b.cols;
  Dense c(m, n);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < k; ++p) s += (ta ? a.at(p, i) : a.at(i, p)) * (tb ? b.at(j, p) : b.at(p, j));
      c.at(i, j) = s;
    }
  return c;
}

inline Dense add_row(Dense y, const Dense& bias) {
  for (std::int64_t i = 0; i < y.rows; ++i)
    for (std::int64_t j = 0; j < y.cols; ++j) y.at(i, j) += bias.v[static_cast<std::size_t>(j)];
  return y;
}

inline Dense column_sums(const Dense& y) {
  Dense s(y.cols, 1);
  for (std::int64_t i = 0; i < y.rows; ++i)
    for (std::int64_t j = 0; j < y.cols; ++j) s.v[static_cast<std::size_t>(j)] += y.at(i, j);
  return s;
}

inline Dense rows_of(const Dense& d, std::int64_t first, std::int64_t n) {
  Dense r(n, d.cols);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d.cols; ++j) r.at(i, j) = d.at(first + i, j);
  return r;
}

inline Dense cols_of(const Dense& d, std::int64_t first, std::int64_t n) {
  Dense r(d.rows, n);
  for (std::int64_t i = 0; i < d.rows; ++i)
    for (std::int64_t j = 0; j < n; ++j) r.at(i, j) = d.at(i, first + j);
  return r;
}

// An f32 tensor of rows x cols owned by the test.
struct F32 {
  std::vector<float> v;
  std::int64_t shape[2];
  DLTensor t{};
  F32(std::int64_t rows, std::int64_t cols, float fill = 0.0f) : v(static_cast<std::size_t>(rows * cols), fill) {
    shape[0] = rows;
    shape[1] = cols;
    t.data = v.data();
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
  }
  explicit F32(const Dense& d) : F32(d.rows, d.cols) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(d.v[i]);
  }
  F32(const F32&) = delete;
  F32& operator=(const F32&) = delete;
  // As a vector (ndim 1), for biases and per-row results.
  F32& flat() {
    t.ndim = 1;
    shape[0] = static_cast<std::int64_t>(v.size());
    return *this;
  }
  DLTensor* operator&() { return &t; }
};

// The largest |got - want| over the largest |want| (0 when both are zero).
inline double relative_error(const F32& got, const Dense& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.v.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got.v[i]) - want.v[i]));
    scale = std::max(scale, std::abs(want.v[i]));
  }
  return scale == 0 ? diff : diff / scale;
}

}  // namespace dtrain::testing
