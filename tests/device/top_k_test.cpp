// Top-k along rows against a stable sort in double, on the test's place:
// exact values and indices, ties to the lower index, NaN first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "device/kernels.hpp"
#include "device/top_k_order.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

using device::RowShape;

void check(DType dtype, RowShape shape, std::int64_t k, const Values& x, const std::string& what) {
  PlacedTensor tx(dtype, x);
  auto values = PlacedTensor::poisoned(dtype, static_cast<std::size_t>(shape.rows * k));
  auto indices = PlacedTensor::poisoned(DType::i64, static_cast<std::size_t>(shape.rows * k));
  device::top_k(shape, k, tx.view(), values.view(), indices.view());
  const Values got_values = values.read();
  const Values got_indices = indices.read();
  for (std::int64_t r = 0; r < shape.rows; ++r) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(shape.cols));
    std::iota(order.begin(), order.end(), std::int64_t{0});
    const double* row = x.data() + r * shape.cols;
    auto before = [&](std::int64_t i, std::int64_t j) {
      const bool i_nan = std::isnan(row[i]), j_nan = std::isnan(row[j]);
      if (i_nan != j_nan) return i_nan;
      return !i_nan && row[i] > row[j];
    };
    std::stable_sort(order.begin(), order.end(), before);
    for (std::int64_t i = 0; i < k; ++i) {
      const std::size_t at = static_cast<std::size_t>(r * k + i);
      ASSERT_EQ(got_indices[at], static_cast<double>(order[i])) << what << ": row " << r << " place " << i;
      const double want = row[order[i]];
      ASSERT_TRUE(got_values[at] == want || (std::isnan(want) && std::isnan(got_values[at])))
          << what << ": row " << r << " place " << i << " value " << got_values[at] << " not " << want;
    }
  }
}

TEST(TopK, MatchesAStableSort) {
  DT_REQUIRE_PLACE();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (std::int64_t cols : {1, 7, 103, 1000}) {
      for (std::int64_t k : {std::int64_t{1}, std::int64_t{2}, std::int64_t{7}, cols}) {
        if (k > cols) continue;
        const RowShape shape{4, cols};
        const std::string what = std::string(dtype_name(dtype)) + " cols " + std::to_string(cols) + " k " +
                                 std::to_string(k);
        check(dtype, shape, k, random_values(dtype, 4 * cols, 31, -100.0, 100.0), what);
      }
    }
  }
}

TEST(TopK, TiesGoToTheLowerIndexAndNanComesFirst) {
  DT_REQUIRE_PLACE();
  Values x = {1, 3, 3, 2, 3, 1, -std::numeric_limits<double>::infinity(), 0};
  check(DType::f32, {1, 8}, 8, x, "ties");
  x[5] = std::numeric_limits<double>::quiet_NaN();
  x[7] = std::numeric_limits<double>::quiet_NaN();
  check(DType::f32, {1, 8}, 4, x, "NaN");
  check(DType::bf16, {2, 4}, 3, x, "two rows of four");
}

}  // namespace
}  // namespace dtrain::test
