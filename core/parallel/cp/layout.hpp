// Where a rank's rows of a sequence sit in the whole sequence, for the two
// ways context parallelism splits one (dtrain/cp.h): contiguous blocks, or
// the zigzag that pairs an early chunk with a late one so that causal
// attention costs every rank the same.
#pragma once

#include <cstdint>
#include <vector>

#include "device/buffer.hpp"

namespace dtrain::parallel::cp {

// Values are those of dt_cp_layout.
enum class SequenceLayout : int { contiguous = 0, zigzag = 1 };

// The layout a dt_cp_layout value names; DT_ERR_INVALID_ARGUMENT otherwise.
SequenceLayout layout_from(int value);

// Refuses (DT_ERR_INVALID_ARGUMENT) a group size below 1 or a rank outside it.
void check_group(int cp_size, int cp_rank);

// Refuses (DT_ERR_INVALID_ARGUMENT) a number of rows per rank that `layout`
// cannot hold: an odd one for zigzag, whose two chunks are equal.
void check_local_rows(SequenceLayout layout, int cp_size, std::int64_t local_rows);

// The global position of local row `index` of `cp_rank`, which holds
// `local_rows` rows (arguments already checked).
std::int64_t global_position(SequenceLayout layout, int cp_size, int cp_rank, std::int64_t local_rows,
                             std::int64_t index);

// global_position() of every local row, in order.
std::vector<std::int64_t> global_positions(SequenceLayout layout, int cp_size, int cp_rank,
                                           std::int64_t local_rows);

// The positions of every rank's `local_rows` rows, rank 0's first, in
// `queue`'s memory (int64, cp_size * local_rows): what the attention of a
// rank's block, or of the sequence gathered in rank order, is masked by.
class SequencePositions {
 public:
  SequencePositions(device::Queue& queue, SequenceLayout layout, int cp_size, std::int64_t local_rows);

  const std::int64_t* all() const { return static_cast<const std::int64_t*>(buffer_.data()); }
  const std::int64_t* of_rank(int rank) const { return all() + rank * local_rows_; }

 private:
  device::Buffer buffer_;
  std::int64_t local_rows_;
};

}  // namespace dtrain::parallel::cp
