#include "parallel/cp/layout.hpp"

#include <string>

#include "base/error.hpp"

namespace dtrain::parallel::cp {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

}  // namespace

SequenceLayout layout_from(int value) {
  switch (value) {
    case static_cast<int>(SequenceLayout::contiguous):
      return SequenceLayout::contiguous;
    case static_cast<int>(SequenceLayout::zigzag):
      return SequenceLayout::zigzag;
    default:
      invalid("layout " + std::to_string(value) + " is neither DT_CP_CONTIGUOUS (0) nor DT_CP_ZIGZAG (1)");
  }
}

void check_group(int cp_size, int cp_rank) {
  if (cp_size < 1) invalid("cp_size is " + std::to_string(cp_size) + "; it must be at least 1");
  if (cp_rank < 0 || cp_rank >= cp_size) {
    invalid("cp_rank " + std::to_string(cp_rank) + " is outside 0.." + std::to_string(cp_size - 1));
  }
}

void check_local_rows(SequenceLayout layout, int cp_size, std::int64_t local_rows) {
  if (layout == SequenceLayout::zigzag && local_rows % 2 != 0) {
    invalid("the zigzag layout needs a sequence divisible by 2 * cp = " + std::to_string(2 * cp_size) +
            " (an even number of rows per rank), but a rank holds " + std::to_string(local_rows));
  }
}

std::int64_t global_position(SequenceLayout layout, int cp_size, int cp_rank, std::int64_t local_rows,
                             std::int64_t index) {
  if (layout == SequenceLayout::contiguous) return cp_rank * local_rows + index;
  const std::int64_t chunk = local_rows / 2;
  const std::int64_t chunk_index = index < chunk ? cp_rank : 2 * cp_size - 1 - cp_rank;
  return chunk_index * chunk + index % chunk;
}

std::vector<std::int64_t> global_positions(SequenceLayout layout, int cp_size, int cp_rank,
                                           std::int64_t local_rows) {
  std::vector<std::int64_t> positions(static_cast<std::size_t>(local_rows));
  for (std::int64_t i = 0; i < local_rows; ++i) {
    positions[static_cast<std::size_t>(i)] = global_position(layout, cp_size, cp_rank, local_rows, i);
  }
  return positions;
}

SequencePositions::SequencePositions(device::Queue& queue, SequenceLayout layout, int cp_size,
                                     std::int64_t local_rows)
    : buffer_(queue, static_cast<std::size_t>(cp_size * local_rows) * sizeof(std::int64_t),
              device::Buffer::Contents::unset),
      local_rows_(local_rows) {
  std::vector<std::int64_t> every_rank;
  for (int rank = 0; rank < cp_size; ++rank) {
    const std::vector<std::int64_t> of_rank = global_positions(layout, cp_size, rank, local_rows);
    every_rank.insert(every_rank.end(), of_rank.begin(), of_rank.end());
  }
  // A copy from pageable memory has read it when it returns.
  queue.copy(buffer_.data(), every_rank.data(), buffer_.bytes());
}

}  // namespace dtrain::parallel::cp
