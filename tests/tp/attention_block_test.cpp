// A Megatron attention block with its heads split over tp: a column-parallel
// fused QKV projection whose weight is sharded by heads (grouped-query: two
// query heads per key-value head), causal attention on this rank's heads, and
// a row-parallel output projection. The same attention code runs on the whole
// block in double (every head) and on each rank's heads in f32, so the test
// holds the sharding and the layers' communication to the dense block,
// forward and backward. Then the linear layers in bf16 and f16.
//
// CTest runs this alone (tp = 1) and under dtrun with 2, 3 and 4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"
#include "tp/dense.hpp"

namespace {

using dtrain::testing::cols_of;
using dtrain::testing::Dense;
using dtrain::testing::F32;
using dtrain::testing::matmul;
using dtrain::testing::random_dense;
using dtrain::testing::relative_error;
using dtrain::testing::rows_of;

// Causal attention of `q_heads` query heads over `kv_heads` key-value heads
// of d columns each: qkv [T, (q + 2 kv) d] (queries, then keys, then values)
// -> out [T, q d]. Backward gives d(qkv) from d(out).
template <typename Real>
struct Attention {
  std::int64_t T, q_heads, kv_heads, d;
  std::int64_t cols() const { return (q_heads + 2 * kv_heads) * d; }
  std::int64_t q_at(std::int64_t h) const { return h * d; }
  std::int64_t k_at(std::int64_t h) const { return (q_heads + h / (q_heads / kv_heads)) * d; }
  std::int64_t v_at(std::int64_t h) const { return (q_heads + kv_heads + h / (q_heads / kv_heads)) * d; }

  // Probabilities [h][i][j] for j <= i.
  std::vector<Real> probabilities(const std::vector<Real>& qkv) const {
    std::vector<Real> p(static_cast<std::size_t>(q_heads * T * T), 0);
    const Real scale = Real(1) / std::sqrt(Real(d));
    for (std::int64_t h = 0; h < q_heads; ++h)
      for (std::int64_t i = 0; i < T; ++i) {
        Real* row = &p[static_cast<std::size_t>((h * T + i) * T)];
        Real m = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j <= i; ++j) {
          Real s = 0;
          for (std::int64_t c = 0; c < d; ++c) s += qkv[i * cols() + q_at(h) + c] * qkv[j * cols() + k_at(h) + c];
          row[j] = s * scale;
          m = std::max(m, row[j]);
        }
        for (std::int64_t j = 0; j <= i; ++j) sum += row[j] = std::exp(row[j] - m);
        for (std::int64_t j = 0; j <= i; ++j) row[j] /= sum;
      }
    return p;
  }

  std::vector<Real> forward(const std::vector<Real>& qkv) const {
    const auto p = probabilities(qkv);
    std::vector<Real> out(static_cast<std::size_t>(T * q_heads * d), 0);
    for (std::int64_t h = 0; h < q_heads; ++h)
      for (std::int64_t i = 0; i < T; ++i)
        for (std::int64_t j = 0; j <= i; ++j)
          for (std::int64_t c = 0; c < d; ++c)
            out[i * q_heads * d + h * d + c] += p[(h * T + i) * T + j] * qkv[j * cols() + v_at(h) + c];
    return out;
  }

  std::vector<Real> backward(const std::vector<Real>& qkv, const std::vector<Real>& dout) const {
    const auto p = probabilities(qkv);
    const Real scale = Real(1) / std::sqrt(Real(d));
    std::vector<Real> dqkv(qkv.size(), 0);
    for (std::int64_t h = 0; h < q_heads; ++h)
      for (std::int64_t i = 0; i < T; ++i) {
        std::vector<Real> dp(static_cast<std::size_t>(i + 1), 0);
        Real dot = 0;
        for (std::int64_t j = 0; j <= i; ++j) {
          const Real pij = p[(h * T + i) * T + j];
          for (std::int64_t c = 0; c < d; ++c) {
            const Real g = dout[i * q_heads * d + h * d + c];
            dp[j] += g * qkv[j * cols() + v_at(h) + c];
            dqkv[j * cols() + v_at(h) + c] += pij * g;
          }
          dot += pij * dp[j];
        }
        for (std::int64_t j = 0; j <= i; ++j) {
          const Real ds = p[(h * T + i) * T + j] * (dp[j] - dot) * scale;
          for (std::int64_t c = 0; c < d; ++c) {
            dqkv[i * cols() + q_at(h) + c] += ds * qkv[j * cols() + k_at(h) + c];
            dqkv[j * cols() + k_at(h) + c] += ds * qkv[i * cols() + q_at(h) + c];
          }
        }
      }
    return dqkv;
  }
};

class TpBlocks : public dtrain::testing::WorldFixture {};

TEST_F(TpBlocks, AttentionBlockWithHeadsSplitMatchesTheDenseBlock) {
  const std::int64_t T = 6, d = 2, q = 2 * size_, kv = size_, H = 4 * size_;
  const Attention<double> dense{T, q, kv, d};
  const Attention<float> local{T, q / size_, kv / size_, d};
  const Dense x = random_dense(T, H, 31), wqkv = random_dense(dense.cols(), H, 32), wo = random_dense(H, q * d, 33),
              dy = random_dense(T, H, 34);
  // The dense block in double.
  const Dense qkv = matmul(x, wqkv, false, true);
  Dense attn(T, q * d), y, dattn, dqkv(T, dense.cols());
  attn.v = dense.forward(qkv.v);
  y = matmul(attn, wo, false, true);
  dattn = matmul(dy, wo);
  dqkv.v = dense.backward(qkv.v, dattn.v);
  const Dense dx = matmul(dqkv, wqkv), dwqkv = matmul(dqkv, x, true, false), dwo = matmul(dy, attn, true, false);

  // This rank's heads.
  F32 x_in(x), wqkv_full(wqkv), wqkv_r(local.cols(), H), wo_full(wo), wo_r(H, q * d / size_);
  ASSERT_EQ(dt_tp_shard(DT_TP_SHARD_QKV, &wqkv_full, &wqkv_r, rank_, size_, static_cast<int>(q), static_cast<int>(kv)),
            DT_OK)
      << dt_error_last();
  ASSERT_EQ(dt_tp_shard(DT_TP_SHARD_COLUMNS, &wo_full, &wo_r, rank_, size_, 0, 0), DT_OK) << dt_error_last();
  F32 qkv_r(T, local.cols()), attn_r(T, q * d / size_), y_out(T, H);
  ASSERT_EQ(dt_tp_column_linear_forward(comm_, &x_in, &wqkv_r, nullptr, &qkv_r, 0), DT_OK) << dt_error_last();
  const std::vector<float> heads_out = local.forward(qkv_r.v);
  std::copy(heads_out.begin(), heads_out.end(), attn_r.v.begin());  // in place: attn_r's tensor points there
  ASSERT_EQ(dt_tp_row_linear_forward(comm_, &attn_r, &wo_r, nullptr, &y_out, 0), DT_OK) << dt_error_last();
  EXPECT_LE(relative_error(y_out, y), 1e-5) << "y on rank " << rank_;

  F32 dy_in(dy), dattn_r(T, q * d / size_), dwo_r(H, q * d / size_);
  ASSERT_EQ(dt_tp_row_linear_backward(comm_, &attn_r, &wo_r, &dy_in, &dattn_r, &dwo_r, nullptr, 0), DT_OK);
  F32 dqkv_r(T, local.cols()), dx_out(T, H), dwqkv_r(local.cols(), H), dwqkv_dense(dwqkv), dwqkv_mine(local.cols(), H);
  const std::vector<float> heads_grad = local.backward(qkv_r.v, dattn_r.v);
  std::copy(heads_grad.begin(), heads_grad.end(), dqkv_r.v.begin());
  ASSERT_EQ(dt_tp_column_linear_backward(comm_, &x_in, &wqkv_r, &dqkv_r, &dx_out, &dwqkv_r, nullptr, 0), DT_OK)
      << dt_error_last();
  EXPECT_LE(relative_error(dx_out, dx), 1e-5) << "dx on rank " << rank_;
  EXPECT_LE(relative_error(dwo_r, cols_of(dwo, rank_ * q * d / size_, q * d / size_)), 1e-5);
  // The rank's rows of the dense dWqkv, picked by the same sharding.
  ASSERT_EQ(dt_tp_shard(DT_TP_SHARD_QKV, &dwqkv_dense, &dwqkv_mine, rank_, size_, static_cast<int>(q),
                        static_cast<int>(kv)),
            DT_OK);
  Dense want(local.cols(), H);
  for (std::size_t i = 0; i < want.v.size(); ++i) want.v[i] = dwqkv_mine.v[i];
  EXPECT_LE(relative_error(dwqkv_r, want), 1e-5) << "dWqkv on rank " << rank_;
}

// An f32 matrix rounded to a 16-bit dtype and back.
struct Half {
  std::vector<std::uint16_t> bits;
  std::int64_t shape[2];
  DLTensor t{};
  Half(const Dense& d, bool bf16) : bits(d.v.size()) {
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const float f = static_cast<float>(d.v[i]);
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      bits[i] = bf16 ? static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16) : to_half(f);
    }
    shape[0] = d.rows;
    shape[1] = d.cols;
    t = {bits.data(), {kDLCPU, 0}, 2, {static_cast<std::uint8_t>(bf16 ? kDLBfloat : kDLFloat), 16, 1}, shape, nullptr, 0};
  }
  static std::uint16_t to_half(float f) {
    // Values here are small and normal: round the mantissa to 10 bits.
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    const std::uint32_t sign = (u >> 16) & 0x8000;
    const int exponent = static_cast<int>((u >> 23) & 0xFF) - 127 + 15;
    std::uint32_t mantissa = u & 0x7FFFFF;
    if (exponent <= 0) return static_cast<std::uint16_t>(sign);
    std::uint32_t h = (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
    if ((mantissa >> 12) & 1) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  double value(std::size_t i, bool bf16) const {
    if (bf16) {
      std::uint32_t u = static_cast<std::uint32_t>(bits[i]) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    const int e = (bits[i] >> 10) & 0x1F;
    const double m = (bits[i] & 0x3FF) / 1024.0;
    const double v = e == 0 ? m * std::ldexp(1.0, -14) : (1 + m) * std::ldexp(1.0, e - 15);
    return (bits[i] & 0x8000) ? -v : v;
  }
  Dense as_dense(std::int64_t rows, std::int64_t cols, bool bf16) const {
    Dense d(rows, cols);
    for (std::size_t i = 0; i < d.v.size(); ++i) d.v[i] = value(i, bf16);
    return d;
  }
};

TEST_F(TpBlocks, SixteenBitLinearLayersStayWithinRounding) {
  const std::int64_t T = 8, H = 16, F = 8 * size_;
  for (bool bf16 : {true, false}) {
    SCOPED_TRACE(bf16 ? "bf16" : "f16");
    const Half x(random_dense(T, H, 41), bf16), w(rows_of(random_dense(F, H, 42), rank_ * 8, 8), bf16);
    // The reference takes the same rounded inputs, in double.
    const Dense want = matmul(x.as_dense(T, H, bf16), w.as_dense(8, H, bf16), false, true);
    Half y(Dense(T, 8), bf16);
    ASSERT_EQ(dt_tp_column_linear_forward(comm_, const_cast<DLTensor*>(&x.t),
                                          const_cast<DLTensor*>(&w.t), nullptr, &y.t, 0),
              DT_OK)
        << dt_error_last();
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < want.v.size(); ++i) {
      worst = std::max(worst, std::abs(y.value(i, bf16) - want.v[i]));
      scale = std::max(scale, std::abs(want.v[i]));
    }
    // Products accumulate in f32 and the result is rounded once: half an
    // ulp of the output, 2^-9 (bf16) or 2^-12 (f16) of its magnitude.
    EXPECT_LE(worst / scale, bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -10));
  }
}

}  // namespace
