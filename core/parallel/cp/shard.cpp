#include "parallel/cp/shard.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/tensor.hpp"
#include "parallel/cp/arguments.hpp"

namespace dtrain::parallel::cp {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) text += (d > 0 ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

std::int64_t rows_per_rank(SequenceLayout layout, int cp_size, const std::vector<std::int64_t>& full) {
  const std::int64_t rows = full[0];
  const std::int64_t parts = layout == SequenceLayout::zigzag ? 2 * static_cast<std::int64_t>(cp_size) : cp_size;
  if (rows % parts != 0) {
    invalid("full has " + std::to_string(rows) + " rows, not divisible by " + std::to_string(parts) +
            (layout == SequenceLayout::zigzag ? " (2 * cp_size, for the zigzag layout)" : " (cp_size)"));
  }
  return rows / static_cast<std::int64_t>(cp_size);
}

}  // namespace

void copy_shard(SequenceLayout layout, int cp_size, int cp_rank, const CheckedTensor& full,
                const CheckedTensor& local, ShardDirection direction) {
  const TensorView& full_view = full.view;
  const TensorView& local_view = local.view;
  const std::vector<std::int64_t>& full_shape = full.layout.shape;
  const std::vector<std::int64_t>& local_shape = local.layout.shape;
  check_group(cp_size, cp_rank);
  if (full_shape.empty()) invalid("full has no dimensions; its first dimension must be the sequence");
  const std::int64_t local_rows = rows_per_rank(layout, cp_size, full_shape);
  std::vector<std::int64_t> expected = full_shape;
  expected[0] = local_rows;
  if (local_view.dtype != full_view.dtype || local_shape != expected) {
    invalid(std::string("local is ") + dtype_name(local_view.dtype) + shape_text(local_shape) + " but full is " +
            dtype_name(full_view.dtype) + shape_text(full_shape) + ", so local must be " + dtype_name(full_view.dtype) +
            "[" + std::to_string(local_rows) + ", ...]");
  }
  if (views_overlap(full_view, local_view)) invalid("local overlaps full");
  if (local_rows == 0) return;
  const std::size_t row_bytes = local_view.bytes() / static_cast<std::size_t>(local_rows);
  auto* full_bytes = static_cast<char*>(full_view.data);
  auto* local_bytes = static_cast<char*>(local_view.data);
  for (std::int64_t i = 0; i < local_rows; ++i) {
    char* in_full = full_bytes + global_position(layout, cp_size, cp_rank, local_rows, i) * row_bytes;
    char* in_local = local_bytes + i * row_bytes;
    if (direction == ShardDirection::full_to_local) {
      std::memcpy(in_local, in_full, row_bytes);
    } else {
      std::memcpy(in_full, in_local, row_bytes);
    }
  }
}

}  // namespace dtrain::parallel::cp
