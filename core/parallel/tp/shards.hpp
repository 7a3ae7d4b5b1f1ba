// Splitting a full weight into the tensor-parallel ranks' shards and putting
// it back together (dt_tp_shard_kind in dtrain/tp.h).
#pragma once

#include "device/queue.hpp"
#include "parallel/tp/group.hpp"
#include "parallel/tp/matrix.hpp"

namespace dtrain::parallel::tp {

// The values of dt_tp_shard_kind.
enum class ShardKind { rows = 0, columns = 1, qkv = 2 };

struct QkvHeads {
  int q = 0;
  int kv = 0;
};

void shard(device::Queue& queue, ShardKind kind, const Matrix& full, const Matrix& local, int rank, int size,
           QkvHeads heads);
void unshard(Group& group, ShardKind kind, const Matrix& local, const Matrix& full, QkvHeads heads);

}  // namespace dtrain::parallel::tp
