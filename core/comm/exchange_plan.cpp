#include "comm/exchange_plan.hpp"

namespace dtrain::comm {

namespace {

void* element_at(const TensorView& view, std::int64_t index) {
  return static_cast<std::byte*>(view.data) + index * static_cast<std::int64_t>(dtype_size(view.dtype));
}

void add(std::vector<PlannedMessage>& list, int peer, void* data, std::size_t bytes) {
  if (bytes > 0) list.push_back({peer, data, bytes});
}

}  // namespace

std::vector<std::int64_t> block_starts(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> starts(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) starts[r] = starts[r - 1] + counts[r - 1];
  return starts;
}

ExchangePlan gather_plan(int rank, int size, const TensorView& send, const TensorView& recv, int root) {
  ExchangePlan plan;
  if (rank != root) {
    add(plan.sends, root, send.data, send.bytes());
    return plan;
  }
  for (int step = 1; step < size; ++step) {
    const int peer = (rank + step) % size;
    add(plan.receives, peer, element_at(recv, peer * send.count), send.bytes());
  }
  plan.own_from = send.data;
  plan.own_to = element_at(recv, root * send.count);
  plan.own_bytes = send.bytes();
  return plan;
}

ExchangePlan scatter_plan(int rank, int size, const TensorView& send, const TensorView& recv, int root) {
  ExchangePlan plan;
  if (rank != root) {
    add(plan.receives, root, recv.data, recv.bytes());
    return plan;
  }
  for (int step = 1; step < size; ++step) {
    const int peer = (rank + step) % size;
    add(plan.sends, peer, element_at(send, peer * recv.count), recv.bytes());
  }
  plan.own_from = element_at(send, root * recv.count);
  plan.own_to = recv.data;
  plan.own_bytes = recv.bytes();
  return plan;
}

ExchangePlan allgatherv_plan(int rank, int size, const TensorView& send, const TensorView& recv,
                             const std::vector<std::int64_t>& recv_counts) {
  ExchangePlan plan;
  const std::vector<std::int64_t> starts = block_starts(recv_counts);
  const std::size_t element = dtype_size(recv.dtype);
  for (int step = 1; step < size; ++step) {
    const int peer = (rank + step) % size;
    add(plan.sends, peer, send.data, send.bytes());
    add(plan.receives, peer, element_at(recv, starts[peer]), static_cast<std::size_t>(recv_counts[peer]) * element);
  }
  plan.own_from = send.data;
  plan.own_to = element_at(recv, starts[rank]);
  plan.own_bytes = send.bytes();
  return plan;
}

}  // namespace dtrain::comm
