// Gathering rows of a table by index and scatter-adding rows into it, and
// summing MoE pairs' rows into their tokens (device/kernel_args.hpp):
// embeddings, and MoE dispatch and combine.
#include <algorithm>
#include <cstring>
#include <string>

#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

// Calls body(i, row) for every index i, with the table row it names: -1 for
// an index outside a slice. A table that is not a slice must hold every
// index's row, checked before the first call.
template <typename Body>
void for_each_row(const IndexedRowsArgs& a, const char* what, Body&& body) {
  auto visit = [&](const auto* indices) {
    for (std::int64_t i = 0; !a.slice && i < a.count; ++i) {
      const std::int64_t index = indices[i];
      if (index < 0 || index >= a.table_rows) {
        raise(DT_ERR_INVALID_ARGUMENT, std::string(what) + ": indices[" + std::to_string(i) + "] = " +
                                           std::to_string(index) + " is outside the table's " +
                                           std::to_string(a.table_rows) + " rows");
      }
    }
    const std::int64_t first = a.slice ? a.first : 0;
    for (std::int64_t i = 0; i < a.count; ++i) {
      const std::int64_t row = static_cast<std::int64_t>(indices[i]) - first;
      body(i, row >= 0 && row < a.table_rows ? row : -1);
    }
  };
  if (a.index_dtype == DType::i32) {
    visit(static_cast<const std::int32_t*>(a.indices));
  } else {
    visit(static_cast<const std::int64_t*>(a.indices));
  }
}

template <typename E>
void scatter_add(const IndexedRowsArgs& a) {
  using Bits = typename E::Bits;
  const auto* rows = static_cast<const Bits*>(a.rows);
  auto* table = static_cast<Bits*>(a.table);
  for_each_row(a, "scatter_add_rows", [&](std::int64_t i, std::int64_t row) {
    if (row < 0) return;
    Bits* to = table + row * a.cols;
    const Bits* from = rows + i * a.cols;
    for (std::int64_t j = 0; j < a.cols; ++j) to[j] = E::store(E::load(to[j]) + E::load(from[j]));
  });
}

// DT_ERR_INVALID_ARGUMENT for a pair_rows entry outside [-1, table_rows).
void check_pair_rows(const PairRowsArgs& a, const char* what) {
  for (std::int64_t p = 0; p < a.tokens * a.k; ++p) {
    const std::int64_t row = a.pair_rows[p];
    if (row < -1 || row >= a.table_rows) {
      raise(DT_ERR_INVALID_ARGUMENT, std::string(what) + ": pair_rows[" + std::to_string(p) + "] = " +
                                         std::to_string(row) + " is outside the table's " +
                                         std::to_string(a.table_rows) + " rows");
    }
  }
}

}  // namespace

void gather_rows(const IndexedRowsArgs& args) {
  // A copy of bytes: any element size; all-zero bits are +0 in every floating format.
  const std::size_t row_bytes = static_cast<std::size_t>(args.cols) * dtype_size(args.dtype);
  const auto* table = static_cast<const std::byte*>(args.table);
  auto* rows = static_cast<std::byte*>(args.rows);
  for_each_row(args, "gather_rows", [&](std::int64_t i, std::int64_t row) {
    if (row < 0) {
      std::memset(rows + i * row_bytes, 0, row_bytes);
    } else {
      std::memcpy(rows + i * row_bytes, table + row * row_bytes, row_bytes);
    }
  });
}

void scatter_add_rows(const IndexedRowsArgs& args) {
  with_element(args.dtype, "scatter_add_rows", [&](auto e) { scatter_add<decltype(e)>(args); });
}

void pair_rows_sum(const PairRowsArgs& a) {
  check_pair_rows(a, "pair_rows_sum");
  for (std::int64_t t = 0; t < a.tokens; ++t) {
    float* to = a.out + t * a.cols;
    bool written = false;
    for (std::int64_t p = t * a.k; p < (t + 1) * a.k; ++p) {
      const std::int64_t row = a.pair_rows[p];
      if (row < 0) continue;
      const float w = a.weights ? a.weights[p] : 1.0f;
      const float* from = a.rows + row * a.cols;
      // Each output row is written once, by the first pair, then added to.
      if (written) {
        for (std::int64_t c = 0; c < a.cols; ++c) to[c] += w * from[c];
      } else {
        for (std::int64_t c = 0; c < a.cols; ++c) to[c] = w * from[c];
      }
      written = true;
    }
    if (!written) std::fill(to, to + a.cols, 0.0f);
  }
}

void pair_rows_sum_backward(const PairRowsArgs& a) {
  check_pair_rows(a, "pair_rows_sum_backward");
  for (std::int64_t p = 0; p < a.tokens * a.k; ++p) {
    const std::int64_t row = a.pair_rows[p];
    if (row < 0) {
      a.d_weights[p] = 0.0f;
      continue;
    }
    const float* d_token = a.d_out + (p / a.k) * a.cols;
    const float* from = a.rows + row * a.cols;
    float* d_row = a.d_rows + row * a.cols;
    const float w = a.weights[p];
    double dot = 0.0;
    for (std::int64_t c = 0; c < a.cols; ++c) {
      dot += static_cast<double>(d_token[c]) * from[c];
      d_row[c] = w * d_token[c];
    }
    a.d_weights[p] = static_cast<float>(dot);
  }
}

}  // namespace dtrain::device::cpu
