// Gathering rows of a table by index and scatter-adding rows into it
// (device/kernel_args.hpp): embeddings, and MoE dispatch and combine.
#include <cstring>
#include <string>

#include "device/cpu/element.hpp"
#include "device/cpu/layer_kernels.hpp"

namespace dtrain::device::cpu {

namespace {

// Calls body(index pointer) for i32 or i64 indices, after checking that
// every index names a row of the table.
template <typename Body>
void with_checked_indices(const IndexedRowsArgs& a, const char* what, Body&& body) {
  auto check = [&](const auto* indices) {
    for (std::int64_t i = 0; i < a.count; ++i) {
      const std::int64_t index = indices[i];
      if (index < 0 || index >= a.table_rows) {
        raise(DT_ERR_INVALID_ARGUMENT, std::string(what) + ": indices[" + std::to_string(i) + "] = " +
                                           std::to_string(index) + " is outside the table's " +
                                           std::to_string(a.table_rows) + " rows");
      }
    }
    body(indices);
  };
  if (a.index_dtype == DType::i32) {
    check(static_cast<const std::int32_t*>(a.indices));
  } else {
    check(static_cast<const std::int64_t*>(a.indices));
  }
}

template <typename E>
void scatter_add(const IndexedRowsArgs& a) {
  using Bits = typename E::Bits;
  with_checked_indices(a, "scatter_add_rows", [&](const auto* indices) {
    const auto* rows = static_cast<const Bits*>(a.rows);
    auto* table = static_cast<Bits*>(a.table);
    for (std::int64_t i = 0; i < a.count; ++i) {
      Bits* to = table + static_cast<std::int64_t>(indices[i]) * a.cols;
      const Bits* from = rows + i * a.cols;
      for (std::int64_t j = 0; j < a.cols; ++j) to[j] = E::store(E::load(to[j]) + E::load(from[j]));
    }
  });
}

}  // namespace

void gather_rows(const IndexedRowsArgs& args) {
  // A copy of bytes: any element size.
  const std::size_t row_bytes = static_cast<std::size_t>(args.cols) * dtype_size(args.dtype);
  with_checked_indices(args, "gather_rows", [&](const auto* indices) {
    const auto* table = static_cast<const std::byte*>(args.table);
    auto* rows = static_cast<std::byte*>(args.rows);
    for (std::int64_t i = 0; i < args.count; ++i) {
      std::memcpy(rows + i * row_bytes, table + static_cast<std::int64_t>(indices[i]) * row_bytes, row_bytes);
    }
  });
}

void scatter_add_rows(const IndexedRowsArgs& args) {
  with_element(args.dtype, "scatter_add_rows", [&](auto e) { scatter_add<decltype(e)>(args); });
}

}  // namespace dtrain::device::cpu
