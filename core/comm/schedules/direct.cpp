// The rooted and uneven collectives, each rank talking straight to its
// peers once the promises agree: gather, scatter and allgatherv carry out
// an ExchangePlan; reduce_scatterv (and reduce, the reduce_scatterv whose
// only block is the root's) sends each peer its block and reduces what
// arrives for its own.
//
// Every message is posted at once: size - 1 messages per rank, one round
// trip after the promises, which suits the small worlds and modest buffers
// these operations serve. A reduction holds every peer's block in scratch
// at once (the root of a reduce: size x count elements); a tree reduce or a
// ring reduce-scatter would need less memory and root bandwidth for large
// worlds.
#include <cstring>
#include <vector>

#include "comm/call_check.hpp"
#include "comm/schedules/agreed_operation.hpp"
#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/chunks.hpp"
#include "comm/schedules/combine.hpp"

namespace dtrain::comm::schedule {

namespace {

class PlannedExchange final : public AgreedOperation {
 public:
  PlannedExchange(const char* name, const Promise& promise, ExchangePlan plan)
      : AgreedOperation(name, promise), plan_(std::move(plan)) {}

 protected:
  Task lane(int, int) override {
    std::vector<Transfer*> promises;
    post_promises(promises);
    co_await all_of(promises);
    check_promises();
    std::vector<Transfer*> moves;
    for (const PlannedMessage& m : plan_.receives) {
      moves.push_back(&transfer());
      recv(*moves.back(), m.peer, kDataStep, m.data, m.bytes);
    }
    for (const PlannedMessage& m : plan_.sends) {
      moves.push_back(&transfer());
      send(*moves.back(), m.peer, kDataStep, m.data, m.bytes);
    }
    if (plan_.own_bytes > 0 && plan_.own_from != plan_.own_to) {
      std::memmove(plan_.own_to, plan_.own_from, plan_.own_bytes);
    }
    co_await all_of(moves);
  }

 private:
  const ExchangePlan plan_;
};

class DirectReduceScatter final : public AgreedOperation {
 public:
  DirectReduceScatter(const char* name, const Promise& promise, const TensorView& send,
                      std::vector<std::int64_t> counts, const TensorView& recv, ReduceOp op)
      : AgreedOperation(name, promise),
        send_(send),
        recv_(recv),
        counts_(std::move(counts)),
        combine_(op, send.dtype) {}

 protected:
  Task lane(int, int) override {
    std::vector<Transfer*> promises;
    post_promises(promises);
    co_await all_of(promises);
    check_promises();
    const int n = size();
    const int me = rank();
    const std::size_t element = dtype_size(send_.dtype);
    const std::vector<std::int64_t> starts = block_starts(counts_);
    const std::size_t mine = recv_.bytes();
    // What every peer sends for this rank's block, in rank order.
    Scratch arrived = scratch(mine * static_cast<std::size_t>(n));
    std::vector<Transfer*> moves;
    std::vector<int> senders;
    for (int step = 1; step < n; ++step) {
      const int peer = (me + step) % n;
      if (mine > 0) {
        moves.push_back(&transfer());
        recv(*moves.back(), peer, kDataStep, arrived.get() + static_cast<std::size_t>(peer) * mine, mine);
        senders.push_back(peer);
      }
      const std::size_t theirs = static_cast<std::size_t>(counts_[peer]) * element;
      if (theirs > 0) {
        moves.push_back(&transfer());
        send(*moves.back(), peer, kDataStep,
             static_cast<const std::byte*>(send_.data) + static_cast<std::size_t>(starts[peer]) * element, theirs);
      }
    }
    co_await all_of(moves);
    if (mine == 0) co_return;
    // Folded in rank order. This rank's own block joins what arrived before
    // recv is written, since recv may be that block of send.
    const std::byte* own = static_cast<const std::byte*>(send_.data) + static_cast<std::size_t>(starts[me]) * element;
    std::memcpy(arrived.get() + static_cast<std::size_t>(me) * mine, own, mine);
    std::memmove(recv_.data, arrived.get(), mine);
    for (int r = 1; r < n; ++r) {
      combine_.apply(recv_.data, arrived.get() + static_cast<std::size_t>(r) * mine, recv_.count);
    }
    combine_.finish(recv_.data, recv_.count, n);
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  const std::vector<std::int64_t> counts_;
  const Combine combine_;
};

Promise promise_of(AgreedOperation::Which which, DType dtype) {
  Promise promise;
  promise.operation = static_cast<std::int32_t>(which);
  promise.dtype = static_cast<std::int32_t>(dtype);
  return promise;
}

}  // namespace

std::unique_ptr<Operation> direct_gather(const ExchangePlan& plan, DType dtype, std::int64_t count, int root) {
  Promise promise = promise_of(AgreedOperation::Which::gather, dtype);
  promise.count = count;
  promise.root = root;
  return std::make_unique<PlannedExchange>("gather", promise, plan);
}

std::unique_ptr<Operation> direct_scatter(const ExchangePlan& plan, DType dtype, std::int64_t count, int root) {
  Promise promise = promise_of(AgreedOperation::Which::scatter, dtype);
  promise.count = count;
  promise.root = root;
  return std::make_unique<PlannedExchange>("scatter", promise, plan);
}

std::unique_ptr<Operation> direct_allgatherv(const ExchangePlan& plan, DType dtype,
                                             const std::vector<std::int64_t>& recv_counts) {
  Promise promise = promise_of(AgreedOperation::Which::allgatherv, dtype);
  promise.counts_digest = counts_digest(recv_counts);
  return std::make_unique<PlannedExchange>("allgatherv", promise, plan);
}

std::unique_ptr<Operation> direct_reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                                                  const TensorView& recv, ReduceOp op) {
  Promise promise = promise_of(AgreedOperation::Which::reduce_scatterv, send.dtype);
  promise.op = static_cast<std::int32_t>(op);
  promise.counts_digest = counts_digest(recv_counts);
  return std::make_unique<DirectReduceScatter>("reduce_scatterv", promise, send, recv_counts, recv, op);
}

std::unique_ptr<Operation> direct_reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root,
                                         int size) {
  Promise promise = promise_of(AgreedOperation::Which::reduce, send.dtype);
  promise.op = static_cast<std::int32_t>(op);
  promise.root = root;
  promise.count = send.count;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(size), 0);
  counts[static_cast<std::size_t>(root)] = send.count;
  // Blocks before the root's are empty, so the root's block is all of send.
  return std::make_unique<DirectReduceScatter>("reduce", promise, send, std::move(counts), recv, op);
}

}  // namespace dtrain::comm::schedule
