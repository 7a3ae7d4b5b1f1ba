// One collective as data: what it is (its kind, as the call check names it),
// the tensors, the reduction, the root and the per-rank counts. The
// schedules that run every kind alike (the shared-memory exchange,
// local_exchange.hpp) take it whole rather than one signature per kind.
#pragma once

#include <cstdint>
#include <vector>

#include "base/tensor.hpp"
#include "comm/call_check.hpp"
#include "comm/reduce_op.hpp"

namespace dtrain::comm {

struct Collective {
  CallKind kind = CallKind::allreduce;
  // broadcast: both the buffer. A view a rank does not use (recv of a
  // reduce or gather off the root, send of a scatter off the root) is empty.
  TensorView send;
  TensorView recv;
  ReduceOp op = ReduceOp::sum;  // the reductions'
  int root = 0;                 // the rooted ones'
  // alltoallv: elements to and from each rank; allgatherv and
  // reduce_scatterv: recv_counts alone. Empty for the other kinds.
  std::vector<std::int64_t> send_counts;
  std::vector<std::int64_t> recv_counts;
};

}  // namespace dtrain::comm
