#include "parallel/tp/shards.hpp"

#include <vector>

#include "base/error.hpp"

namespace dtrain::parallel::tp {

namespace {

// A run of whole rows that one rank's shard takes from the full matrix.
struct RowRun {
  std::int64_t full_row;   // where it starts in the full matrix
  std::int64_t local_row;  // where it starts in the shard
  std::int64_t rows;
};

// The runs of rows of rank `rank`'s shard: one for a row split, three (its
// query, key and value heads) for a fused QKV weight.
std::vector<RowRun> row_runs(ShardKind kind, std::int64_t rows, int rank, int size, QkvHeads heads) {
  if (kind == ShardKind::rows) {
    expect_divisible(rows, "the rows of the full weight", size);
    const std::int64_t block = rows / size;
    return {{rank * block, 0, block}};
  }
  if (heads.q <= 0 || heads.kv <= 0 || heads.q % heads.kv != 0) {
    raise(DT_ERR_INVALID_ARGUMENT, "q_heads " + std::to_string(heads.q) + " and kv_heads " + std::to_string(heads.kv) +
                                       " must be positive, with q_heads a multiple of kv_heads");
  }
  expect_divisible(heads.q, "q_heads", size);
  expect_divisible(heads.kv, "kv_heads", size);
  const std::int64_t per_head_rows = heads.q + 2 * heads.kv;
  if (rows % per_head_rows != 0) {
    raise(DT_ERR_INVALID_ARGUMENT, "the fused QKV weight has " + std::to_string(rows) +
                                       " rows, not a multiple of q_heads + 2 kv_heads = " + std::to_string(per_head_rows));
  }
  const std::int64_t d = rows / per_head_rows;
  const std::int64_t q_block = heads.q / size * d, kv_block = heads.kv / size * d;
  const std::int64_t k_start = heads.q * d, v_start = (heads.q + heads.kv) * d;
  return {{rank * q_block, 0, q_block},
          {k_start + rank * kv_block, q_block, kv_block},
          {v_start + rank * kv_block, q_block + kv_block, kv_block}};
}

void check_kind(ShardKind kind) {
  if (kind != ShardKind::rows && kind != ShardKind::columns && kind != ShardKind::qkv) {
    raise(DT_ERR_INVALID_ARGUMENT, "kind " + std::to_string(static_cast<int>(kind)) + " is not a dt_tp_shard_kind");
  }
}

void check_local_shape(ShardKind kind, const Matrix& full, const Matrix& local, int size) {
  expect_dtype(local.view, "local", full.view.dtype);
  if (kind == ShardKind::columns) {
    expect_divisible(full.cols, "the columns of the full weight", size);
    expect_shape(local, "local", full.rows, full.cols / size);
  } else {
    expect_divisible(full.rows, "the rows of the full weight", size);
    expect_shape(local, "local", full.rows / size, full.cols);
  }
}

// Copies `rows` rows between full and local, either way.
void copy_rows(device::Queue& queue, const Matrix& from, std::int64_t from_row, const Matrix& to, std::int64_t to_row,
               std::int64_t rows) {
  const std::size_t row_bytes = static_cast<std::size_t>(from.cols) * dtype_size(from.view.dtype);
  queue.copy(static_cast<std::byte*>(to.view.data) + static_cast<std::size_t>(to_row) * row_bytes,
             static_cast<const std::byte*>(from.view.data) + static_cast<std::size_t>(from_row) * row_bytes,
             static_cast<std::size_t>(rows) * row_bytes);
}

}  // namespace

void shard(device::Queue& queue, ShardKind kind, const Matrix& full, const Matrix& local, int rank, int size,
           QkvHeads heads) {
  check_kind(kind);
  if (size < 1 || rank < 0 || rank >= size) {
    raise(DT_ERR_INVALID_ARGUMENT, "rank " + std::to_string(rank) + " is outside a group of " + std::to_string(size));
  }
  check_local_shape(kind, full, local, size);
  if (kind == ShardKind::columns) {
    copy_columns(queue, full, rank * local.cols, local);
    return;
  }
  for (const RowRun& run : row_runs(kind, full.rows, rank, size, heads)) {
    copy_rows(queue, full, run.full_row, local, run.local_row, run.rows);
  }
}

void unshard(Group& group, ShardKind kind, const Matrix& local, const Matrix& full, QkvHeads heads) {
  check_kind(kind);
  check_local_shape(kind, full, local, group.size());
  if (kind == ShardKind::columns) {
    group.allgather_columns(local, full);
    return;
  }
  // Checked on every rank's runs before the gather, so a bad head count refuses without communicating.
  std::vector<std::vector<RowRun>> runs;
  for (int r = 0; r < group.size(); ++r) runs.push_back(row_runs(kind, full.rows, r, group.size(), heads));
  Scratch shards(group.queue(), local.view.dtype, local.rows * group.size(), local.cols);
  group.allgather_rows(local, shards.matrix());
  for (int r = 0; r < group.size(); ++r) {
    for (const RowRun& run : runs[static_cast<std::size_t>(r)]) {
      copy_rows(group.queue(), shards.matrix(), r * local.rows + run.local_row, full, run.full_row, run.rows);
    }
  }
}

}  // namespace dtrain::parallel::tp
