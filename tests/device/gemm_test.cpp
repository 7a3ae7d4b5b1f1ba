// GEMM (device/gemm.hpp) against a triple loop in double, on the test's
// place (placed_tensor.hpp): every transpose combination, odd shapes, padded
// rows, alpha and beta, strided and pointer-array batches, 16-bit inputs.
//
// Tolerances. Each element of C is checked within
//   tol * (|alpha| * sum_p |a_ip b_pj| + |beta c_ij|)  (+ one output rounding)
// with tol = 1e-5 for f32 accumulation and 1e-12 for f64. A sum of k f32
// terms errs by at most about k * 2^-24 of that scale (6e-5 at k = 1000) in
// the worst case, but rounding errors of random sign grow like
// sqrt(k) * 2^-24 (2e-6 at k = 1000), and BLAS's blocked sums slower still:
// 1e-5 holds with room to spare and still catches a single wrong term.
// 16-bit inputs are exact in f32, so they add nothing; a 16-bit C adds one
// rounding, half a unit in the last place: 2^-8 relative for bf16, 2^-11
// for f16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/gemm.hpp"
#include "placed_tensor.hpp"

namespace dtrain::test {
namespace {

using device::GemmShape;
using device::kPacked;

struct Product {
  std::vector<double> want;   // the exact result
  std::vector<double> scale;  // sum of |terms| per element, for the tolerance
};

// C = alpha op(A) op(B) + beta C in double, on resolved strides.
Product reference(const GemmShape& shape, const std::vector<double>& a, const std::vector<double>& b,
                  const std::vector<double>& c) {
  const GemmShape s = device::resolve_strides(shape);
  Product p{c, std::vector<double>(c.size(), 0.0)};
  for (std::int64_t batch = 0; batch < s.batch; ++batch) {
    for (std::int64_t i = 0; i < s.m; ++i) {
      for (std::int64_t j = 0; j < s.n; ++j) {
        double sum = 0, magnitude = 0;
        for (std::int64_t q = 0; q < s.k; ++q) {
          const double av = a[batch * s.stride_a + (s.transpose_a ? q * s.lda + i : i * s.lda + q)];
          const double bv = b[batch * s.stride_b + (s.transpose_b ? j * s.ldb + q : q * s.ldb + j)];
          sum += av * bv;
          magnitude += std::fabs(av * bv);
        }
        const std::size_t at = batch * s.stride_c + i * s.ldc + j;
        const double old = s.beta == 0.0 ? 0.0 : c[at];
        p.want[at] = s.alpha * sum + s.beta * old;
        p.scale[at] = std::fabs(s.alpha) * magnitude + std::fabs(s.beta * old);
      }
    }
  }
  return p;
}

std::int64_t extent(std::int64_t batch, std::int64_t stride, std::int64_t rows, std::int64_t ld) {
  return (batch - 1) * stride + rows * ld;
}

double accumulation_tolerance(DType input) { return input == DType::f64 ? 1e-12 : 1e-5; }

// Runs `shape` on random operands of `input` dtype with C of `output` dtype,
// and checks every element of C (padding included, which must keep its
// value).
void check_gemm(const GemmShape& shape, DType input, DType output, const std::string& what) {
  const GemmShape s = device::resolve_strides(shape);
  const std::int64_t a_rows = s.transpose_a ? s.k : s.m;
  const std::int64_t b_rows = s.transpose_b ? s.n : s.k;
  const auto a = random_values(input, extent(s.batch, s.stride_a, a_rows, s.lda), 1);
  const auto b = random_values(input, extent(s.batch, s.stride_b, b_rows, s.ldb), 2);
  const auto c = random_values(output, extent(s.batch, s.stride_c, s.m, s.ldc), 3);
  PlacedTensor ta(input, a), tb(input, b), tc(output, c);
  device::gemm(shape, ta.view(), tb.view(), tc.view());
  const std::vector<double> got = tc.read();
  const Product p = reference(shape, a, b, c);
  const double tol = accumulation_tolerance(input);
  const double rounding = output == DType::f32 || output == DType::f64 ? 0.0 : epsilon(output) / 2;
  int reported = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double bound = tol * p.scale[i] + rounding * std::fabs(p.want[i]) + 1e-30;
    if (!(std::fabs(got[i] - p.want[i]) <= bound)) {
      ADD_FAILURE() << what << ": C element " << i << " is " << got[i] << ", expected " << p.want[i] << " within "
                    << bound;
      if (++reported == 5) return;
    }
  }
}

std::string describe(const GemmShape& s, DType input, DType output) {
  return std::string(s.transpose_a ? "T" : "N") + (s.transpose_b ? "T" : "N") + " m" + std::to_string(s.m) + " n" +
         std::to_string(s.n) + " k" + std::to_string(s.k) + " batch " + std::to_string(s.batch) + " " +
         dtype_name(input) + "->" + dtype_name(output) + " alpha " + std::to_string(s.alpha) + " beta " +
         std::to_string(s.beta);
}

GemmShape shape_of(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha = 1.0,
                   double beta = 0.0) {
  GemmShape s;
  s.transpose_a = ta;
  s.transpose_b = tb;
  s.m = m;
  s.n = n;
  s.k = k;
  s.alpha = alpha;
  s.beta = beta;
  return s;
}

const std::int64_t kOddDims[][3] = {{1, 1, 1}, {7, 1, 103}, {1, 103, 7}, {103, 7, 1}, {7, 103, 103}, {103, 103, 7}};

TEST(Gemm, F32EveryTransposeAndOddShape) {
  DT_REQUIRE_PLACE();
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const auto& d : kOddDims) {
        for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-2.5, 0.75}}) {
          const GemmShape s = shape_of(ta, tb, d[0], d[1], d[2], alpha, beta);
          check_gemm(s, DType::f32, DType::f32, describe(s, DType::f32, DType::f32));
        }
      }
    }
  }
}

TEST(Gemm, F32Size1000) {
  DT_REQUIRE_PLACE();
  for (const auto& s : {shape_of(false, false, 1000, 103, 1000, 1.0, 0.5), shape_of(true, true, 103, 1000, 7)}) {
    check_gemm(s, DType::f32, DType::f32, describe(s, DType::f32, DType::f32));
  }
}

TEST(Gemm, F64) {
  DT_REQUIRE_PLACE();
  for (bool ta : {false, true}) {
    const GemmShape s = shape_of(ta, !ta, 37, 29, 53, 0.5, -1.0);
    check_gemm(s, DType::f64, DType::f64, describe(s, DType::f64, DType::f64));
  }
}

TEST(Gemm, SixteenBitInputsToTheirOwnDtypeAndF32) {
  DT_REQUIRE_PLACE();
  for (DType input : {DType::bf16, DType::f16}) {
    for (DType output : {input, DType::f32}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          // k = 300 spans two of the CPU's widened blocks and a partial third.
          for (const GemmShape& s : {shape_of(ta, tb, 7, 103, 300, 1.5, 0.5), shape_of(ta, tb, 1, 1, 1)}) {
            check_gemm(s, input, output, describe(s, input, output));
          }
        }
      }
    }
  }
}

TEST(Gemm, ZeroDepthScalesC) {
  DT_REQUIRE_PLACE();
  for (DType input : {DType::f32, DType::bf16, DType::f16}) {
    for (DType output : {input, DType::f32}) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          for (double beta : {0.0, 0.5}) {
            const GemmShape s = shape_of(ta, tb, 5, 6, 0, 1.0, beta);
            check_gemm(s, input, output, describe(s, input, output));
          }
        }
      }
    }
  }
}

TEST(Gemm, BetaZeroIgnoresWhatCHeld) {
  DT_REQUIRE_PLACE();
  for (DType input : {DType::f32, DType::bf16}) {
    for (DType output : {input, DType::f32}) {
      const GemmShape s = shape_of(false, true, 3, 4, 300);
      const auto a = random_values(input, 3 * 300, 1), b = random_values(input, 4 * 300, 2);
      PlacedTensor ta(input, a), tb(input, b);
      auto tc = PlacedTensor::poisoned(output, 12);
      device::gemm(s, ta.view(), tb.view(), tc.view());
      const Product p = reference(s, a, b, std::vector<double>(12, 0.0));
      const double rounding = output == DType::f32 ? 0.0 : epsilon(output) / 2;
      expect_near(tc.read(), p.want, rounding, 1e-5 * *std::max_element(p.scale.begin(), p.scale.end()),
                  std::string(dtype_name(input)) + "->" + dtype_name(output) + " over NaN");
    }
  }
}

TEST(Gemm, PaddedRows) {
  DT_REQUIRE_PLACE();
  for (DType input : {DType::f32, DType::bf16}) {
    for (bool ta : {false, true}) {
      GemmShape s = shape_of(ta, !ta, 13, 11, 17, 1.0, 1.0);
      s.lda = 21;
      s.ldb = 19;
      s.ldc = 12;
      check_gemm(s, input, input, describe(s, input, input) + " padded");
    }
  }
}

TEST(Gemm, StridedBatched) {
  DT_REQUIRE_PLACE();
  for (DType input : {DType::f32, DType::bf16}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        GemmShape packed = shape_of(ta, tb, 7, 9, 11, 2.0, 0.5);
        packed.batch = 3;
        check_gemm(packed, input, input, describe(packed, input, input) + " packed");
        // Gaps between the matrices, and one B shared by every product.
        GemmShape gaps = packed;
        gaps.stride_a = 7 * 11 + 5;
        gaps.stride_b = 0;
        gaps.stride_c = 7 * 9 + 3;
        check_gemm(gaps, input, DType::f32, describe(gaps, input, DType::f32) + " gaps, shared B");
      }
    }
  }
}

TEST(Gemm, BatchedMatchesOneByOne) {
  DT_REQUIRE_PLACE();
  const GemmShape s = shape_of(true, false, 5, 7, 9, 1.0, 1.0);
  std::vector<PlacedTensor> a, b, c;
  std::vector<std::vector<double>> a_values, b_values, c_values;
  for (unsigned i = 0; i < 4; ++i) {
    a_values.push_back(random_values(DType::f32, 9 * 5, 10 + i));
    b_values.push_back(random_values(DType::f32, 9 * 7, 20 + i));
    c_values.push_back(random_values(DType::f32, 5 * 7, 30 + i));
    a.emplace_back(DType::f32, a_values.back());
    b.emplace_back(DType::f32, b_values.back());
    c.emplace_back(DType::f32, c_values.back());
  }
  std::vector<TensorView> av, bv, cv;
  for (unsigned i = 0; i < 4; ++i) {
    av.push_back(a[i].view());
    bv.push_back(b[i].view());
    cv.push_back(c[i].view());
  }
  device::gemm_batched(s, av, bv, cv);
  for (unsigned i = 0; i < 4; ++i) {
    const Product p = reference(s, a_values[i], b_values[i], c_values[i]);
    expect_near(c[i].read(), p.want, 0.0, 1e-5 * *std::max_element(p.scale.begin(), p.scale.end()),
                "batched product " + std::to_string(i));
  }
}

void expect_refused(const std::function<void()>& call, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error saying '" << words << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Gemm, RefusesBadOperandsBeforeComputing) {
  DT_REQUIRE_PLACE();
  PlacedTensor a(DType::f32, random_values(DType::f32, 6, 1)), b(DType::f32, random_values(DType::f32, 6, 2));
  PlacedTensor c(DType::f32, std::vector<double>(4, 7.0));
  const GemmShape s = shape_of(false, false, 2, 2, 3);
  PlacedTensor short_c(DType::f32, std::vector<double>(3, 7.0));
  expect_refused([&] { device::gemm(s, a.view(), b.view(), short_c.view()); }, "C holds 3 elements");
  PlacedTensor b16(DType::bf16, random_values(DType::bf16, 6, 2));
  expect_refused([&] { device::gemm(s, a.view(), b16.view(), c.view()); }, "B is bfloat16");
  GemmShape narrow = s;
  narrow.lda = 2;
  expect_refused([&] { device::gemm(narrow, a.view(), b.view(), c.view()); }, "lda = 2");
  GemmShape negative = s;
  negative.m = -1;
  expect_refused([&] { device::gemm(negative, a.view(), b.view(), c.view()); }, "m = -1");
  GemmShape overlapping = s;
  overlapping.batch = 2;
  overlapping.stride_a = overlapping.stride_b = 0;
  overlapping.stride_c = 1;
  PlacedTensor long_c(DType::f32, std::vector<double>(8, 7.0));
  expect_refused([&] { device::gemm(overlapping, a.view(), b.view(), long_c.view()); }, "makes C's matrices overlap");
  expect_refused([&] { device::gemm(s, a.view(), b.view(), a.view()); }, "C overlaps");
  EXPECT_EQ(c.read(), std::vector<double>(4, 7.0));
}

}  // namespace
}  // namespace dtrain::test
