// The messages of a collective in which every rank talks straight to the
// ranks that hold or want its data (gather, scatter, allgatherv): what this
// rank sends, what it receives, and the block it copies to itself. Plans
// are transport-neutral; the UCX backend posts them as tagged messages, the
// NCCL backend as a group of sends and receives. Messages of no bytes are
// left out: the ranks agree on every count, so both sides leave out the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/tensor.hpp"

namespace dtrain::comm {

struct PlannedMessage {
  int peer = 0;
  void* data = nullptr;
  std::size_t bytes = 0;
};

struct ExchangePlan {
  // Sends and receives, each list starting at the next rank up and going
  // round, so that ranks do not all start with the same peer.
  std::vector<PlannedMessage> sends;
  std::vector<PlannedMessage> receives;
  // This rank's own block: `own_bytes` from `own_from` to `own_to` (which
  // may be the same place, in place).
  const void* own_from = nullptr;
  void* own_to = nullptr;
  std::size_t own_bytes = 0;
};

// The plan of rank `rank` of `size`, for arguments the communicator has
// checked; views a rank does not use are empty.
ExchangePlan gather_plan(int rank, int size, const TensorView& send, const TensorView& recv, int root);
ExchangePlan scatter_plan(int rank, int size, const TensorView& send, const TensorView& recv, int root);
ExchangePlan allgatherv_plan(int rank, int size, const TensorView& send, const TensorView& recv,
                             const std::vector<std::int64_t>& recv_counts);

// Where each rank's block starts in a buffer of blocks packed in rank
// order: the running sums of `counts`, in elements.
std::vector<std::int64_t> block_starts(const std::vector<std::int64_t>& counts);

}  // namespace dtrain::comm
