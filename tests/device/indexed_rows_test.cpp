// Gathering and scatter-adding rows by index, on the test's place: gather
// exactly, scatter-add against sums in double (repeated indices included).
// Each addition rounds once in the table's dtype, and on CUDA their order
// varies, so scatter-add allows one unit in the last place of the dtype per
// addition into an element, relative to the largest sum. MoE's pair sums
// and their backward pass against sums and dot products in double.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.hpp"
#include "device/kernels.hpp"
#include "placed_tensor.hpp"
#include "reference.hpp"

namespace dtrain::test {
namespace {

const Values kIndices = {3, 0, 3, 5, 3, 1, 0};  // repeats, and rows 2 and 4 untouched
const std::int64_t kTableRows = 6;

TEST(IndexedRows, GatherCopiesRows) {
  DT_REQUIRE_PLACE();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (DType index_dtype : {DType::i32, DType::i64}) {
      for (std::int64_t cols : {1, 7, 103}) {
        const Values table = random_values(dtype, kTableRows * cols, 41);
        PlacedTensor ttable(dtype, table), tindices(index_dtype, kIndices);
        auto rows = PlacedTensor::poisoned(dtype, kIndices.size() * cols);
        device::gather_rows(cols, ttable.view(), tindices.view(), rows.view());
        Values want;
        for (double index : kIndices) {
          const auto first = table.begin() + static_cast<std::int64_t>(index) * cols;
          want.insert(want.end(), first, first + cols);
        }
        EXPECT_EQ(rows.read(), want) << dtype_name(dtype) << " indices " << dtype_name(index_dtype) << " cols "
                                     << cols;
      }
    }
  }
}

TEST(IndexedRows, ScatterAddSumsRepeatedIndices) {
  DT_REQUIRE_PLACE();
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (DType index_dtype : {DType::i32, DType::i64}) {
      for (std::int64_t cols : {1, 7, 103}) {
        const Values table = random_values(dtype, kTableRows * cols, 42);
        const Values rows = random_values(dtype, kIndices.size() * cols, 43);
        PlacedTensor ttable(dtype, table), tindices(index_dtype, kIndices), trows(dtype, rows);
        device::scatter_add_rows(cols, trows.view(), tindices.view(), ttable.view());
        Values want = table;
        for (std::size_t i = 0; i < kIndices.size(); ++i) {
          for (std::int64_t j = 0; j < cols; ++j) {
            want[static_cast<std::int64_t>(kIndices[i]) * cols + j] += rows[i * cols + j];
          }
        }
        const double additions = 3;  // the most any row receives
        const double ulp = dtype == DType::f32 ? epsilon(DType::f32) : epsilon(dtype);
        expect_near(ttable.read(), want, 0, additions * ulp * largest(want),
                    std::string(dtype_name(dtype)) + " indices " + dtype_name(index_dtype) + " cols " +
                        std::to_string(cols));
      }
    }
  }
}

TEST(IndexedRows, SlicesZeroAndSkipIndicesOutsideThem) {
  DT_REQUIRE_PLACE();
  // The table is rows [2, 5) of a larger one; indices name rows of that.
  const std::int64_t first = 2, rows = 3, cols = 5;
  const Values indices = {3, 0, 4, 7, 3, 2, -1};
  for (DType dtype : {DType::f32, DType::bf16}) {
    const Values table = random_values(dtype, rows * cols, 44);
    const Values grads = random_values(dtype, indices.size() * cols, 45);
    PlacedTensor ttable(dtype, table), tindices(DType::i64, indices), tgrads(dtype, grads);
    auto gathered = PlacedTensor::poisoned(dtype, indices.size() * cols);
    device::gather_slice_rows(cols, first, ttable.view(), tindices.view(), gathered.view());
    device::scatter_add_slice_rows(cols, first, tgrads.view(), tindices.view(), ttable.view());
    Values want_gathered, want_table = table;
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const auto row = static_cast<std::int64_t>(indices[i]) - first;
      const bool inside = row >= 0 && row < rows;
      for (std::int64_t j = 0; j < cols; ++j) {
        want_gathered.push_back(inside ? table[row * cols + j] : 0.0);
        if (inside) want_table[row * cols + j] = stored(dtype, want_table[row * cols + j] + grads[i * cols + j]);
      }
    }
    EXPECT_EQ(gathered.read(), want_gathered) << dtype_name(dtype);
    // Row 1 of the slice (index 3) receives two additions, whose order may vary on CUDA.
    expect_near(ttable.read(), want_table, 0, 2 * epsilon(dtype) * largest(want_table), dtype_name(dtype));
  }
}

// Three tokens of k = 2 pairs over a table of five rows: token 0 owns rows
// 3 and 0, token 1 only row 4 (its second pair dropped), token 2 none; rows
// 1 and 2 belong to no pair.
const Values kPairRows = {3, 0, 4, -1, -1, -1};
constexpr std::int64_t kPairTokens = 3, kPairK = 2, kPairTable = 5;

// Rows of 1027 floats are wide enough for the CPU to stream its output
// (with a tail of 3 that it stores the ordinary way); `shift` puts the
// output one float off its buffer's alignment, so that some rows start
// where streaming stores cannot.
TEST(PairRows, SumWeighsEachTokensRowsAndZeroesTokensWithoutAny) {
  DT_REQUIRE_PLACE();
  for (std::int64_t cols : {1, 7, 300, 1027}) {
    const Values table = random_values(DType::f32, kPairTable * cols, 46);
    const Values weights = random_values(DType::f32, kPairTokens * kPairK, 47);
    Values want[2] = {Values(kPairTokens * cols, 0.0), Values(kPairTokens * cols, 0.0)};  // unweighted, weighted
    for (std::size_t p = 0; p < kPairRows.size(); ++p) {
      if (kPairRows[p] < 0) continue;
      const auto row = static_cast<std::int64_t>(kPairRows[p]);
      const auto t = static_cast<std::int64_t>(p) / kPairK;
      for (std::int64_t c = 0; c < cols; ++c) {
        want[0][t * cols + c] += table[row * cols + c];
        want[1][t * cols + c] += weights[p] * table[row * cols + c];
      }
    }
    for (bool weighted : {true, false}) {
      for (std::int64_t shift : {0, 1}) {
        PlacedTensor trows(DType::f32, table), tpairs(DType::i64, kPairRows), tweights(DType::f32, weights);
        auto buffer = PlacedTensor::poisoned(DType::f32, kPairTokens * cols + shift);
        device::pair_rows_sum(kPairK, cols, trows.view(), tpairs.view(), weighted ? tweights.view() : TensorView{},
                              buffer.view().slice(shift, kPairTokens * cols));
        Values out = buffer.read();
        out.erase(out.begin(), out.begin() + shift);
        expect_near(out, want[weighted ? 1 : 0], 4 * epsilon(DType::f32), 4 * epsilon(DType::f32),
                    "cols " + std::to_string(cols) + " shift " + std::to_string(shift));
      }
    }
  }
}

TEST(PairRows, BackwardScalesRowsAndDotsTheirPairsAndLeavesOtherRows) {
  DT_REQUIRE_PLACE();
  for (std::int64_t cols : {1, 7, 300}) {
    const Values table = random_values(DType::f32, kPairTable * cols, 48);
    const Values weights = random_values(DType::f32, kPairTokens * kPairK, 49);
    const Values d_out = random_values(DType::f32, kPairTokens * cols, 50);
    const Values untouched(kPairTable * cols, 5.0);
    PlacedTensor trows(DType::f32, table), tpairs(DType::i64, kPairRows), tweights(DType::f32, weights),
        td_out(DType::f32, d_out), td_rows(DType::f32, untouched);
    auto d_weights = PlacedTensor::poisoned(DType::f32, kPairTokens * kPairK);
    device::pair_rows_sum_backward(kPairK, cols, td_out.view(), tweights.view(), trows.view(), tpairs.view(),
                                   td_rows.view(), d_weights.view());
    Values want_rows = untouched, want_weights(kPairTokens * kPairK, 0.0);
    double dot_scale = 0;
    for (std::size_t p = 0; p < kPairRows.size(); ++p) {
      if (kPairRows[p] < 0) continue;
      const auto row = static_cast<std::int64_t>(kPairRows[p]);
      const auto t = static_cast<std::int64_t>(p) / kPairK;
      for (std::int64_t c = 0; c < cols; ++c) {
        want_rows[row * cols + c] = stored(DType::f32, weights[p] * d_out[t * cols + c]);
        want_weights[p] += d_out[t * cols + c] * table[row * cols + c];
        dot_scale += std::abs(d_out[t * cols + c] * table[row * cols + c]);
      }
    }
    EXPECT_EQ(td_rows.read(), want_rows) << "cols " << cols;
    // Products of floats summed in double, rounded once.
    expect_near(d_weights.read(), want_weights, epsilon(DType::f32), 1e-12 * dot_scale, "cols " + std::to_string(cols));
  }
}

#ifndef DTRAIN_TEST_ON_GPU
// The CPU refuses an index outside the table before touching anything
// (CUDA skips such rows instead, kernels.hpp).
TEST(IndexedRows, CpuRefusesAnIndexOutsideTheTable) {
  const Values table(12, 1.0);
  for (double bad : {-1.0, 6.0}) {
    PlacedTensor ttable(DType::f32, table), tindices(DType::i64, {0, bad}), trows(DType::f32, Values(4, 2.0));
    try {
      device::scatter_add_rows(2, trows.view(), tindices.view(), ttable.view());
      ADD_FAILURE() << "index " << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("indices[1]"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ttable.read(), table);
  }
}

TEST(PairRows, CpuRefusesARowOutsideTheTable) {
  for (double bad : {-2.0, 5.0}) {
    PlacedTensor trows(DType::f32, Values(10, 1.0)), tpairs(DType::i64, {0, bad}), tweights(DType::f32, {1, 1});
    auto out = PlacedTensor::poisoned(DType::f32, 2);
    try {
      device::pair_rows_sum(2, 2, trows.view(), tpairs.view(), tweights.view(), out.view());
      ADD_FAILURE() << "pair row " << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("pair_rows[1]"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(std::isnan(out.read()[0]));
  }
}
#endif

}  // namespace
}  // namespace dtrain::test
