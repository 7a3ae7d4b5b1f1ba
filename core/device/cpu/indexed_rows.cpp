// Gathering rows of a table by index and scatter-adding rows into it
// (device/kernel_args.hpp): embeddings, and MoE dispatch and combine.
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

}  // namespace dtrain::device::cpu
