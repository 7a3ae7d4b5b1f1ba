// Gathering and scatter-adding rows by index, on the test's place: gather
// exactly, scatter-add against sums in double (repeated indices included).
// Each addition rounds once in the table's dtype, and on CUDA their order
// varies, so scatter-add allows one unit in the last place of the dtype per
// addition into an element, relative to the largest sum.
#include <gtest/gtest.h>

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
#endif

}  // namespace
}  // namespace dtrain::test
