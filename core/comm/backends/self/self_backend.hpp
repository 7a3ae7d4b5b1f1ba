// The backend of a world of one rank. Collectives are copies; a message sent
// to oneself is matched to a receive by tag, buffered when no receive is
// posted yet, so a trainer written for many ranks runs unchanged on one.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/backend.hpp"

namespace dtrain::comm {

class SelfBackend final : public Backend {
 public:
  const char* name() const override { return "self"; }

  RequestPtr allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) override;
  RequestPtr reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) override;
  RequestPtr allgather(const TensorView& send, const TensorView& recv) override;
  RequestPtr broadcast(const TensorView& buf, int root) override;
  RequestPtr alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                       const TensorView& recv, const std::vector<std::int64_t>& recv_counts) override;
  RequestPtr send(const TensorView& buf, int peer, int tag) override;
  RequestPtr recv(const TensorView& buf, int peer, int tag) override;
  RequestPtr barrier() override;
  RequestPtr reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root) override;
  RequestPtr gather(const TensorView& send, const TensorView& recv, int root) override;
  RequestPtr scatter(const TensorView& send, const TensorView& recv, int root) override;
  RequestPtr allgatherv(const TensorView& send, const TensorView& recv,
                        const std::vector<std::int64_t>& recv_counts) override;
  RequestPtr reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                             const TensorView& recv, ReduceOp op) override;
  // Sends first, then receives, so a group's receive finds the group's
  // send whatever their order in the group.
  RequestPtr p2p_group(const std::vector<P2pOp>& ops) override;
  std::unique_ptr<Backend> split(int color, int key, int* new_rank, int* new_size) override;
  void abort() override;

 private:
  struct Message {
    int tag;
    DType dtype;
    std::vector<unsigned char> bytes;
    std::int64_t count;
  };
  struct PendingRecv {
    int tag;
    TensorView buf;
    RequestPtr request;
    // The receives of `request` not yet matched (a group has several); it
    // completes when the last one is, or at the first failure.
    std::shared_ptr<int> outstanding;
  };

  RequestPtr finished(const char* op);
  RequestPtr started(const char* op);
  // Under mutex_: a message to oneself, delivered to the oldest receive of
  // its tag or kept until one is posted.
  void post_send(const TensorView& buf, int tag);
  // Under mutex_: a receive, matched with the oldest message of its tag or
  // kept until one is sent.
  void post_recv(const PendingRecv& recv);
  static void deliver(const PendingRecv& to, DType dtype, const void* bytes, std::int64_t count);

  std::mutex mutex_;  // guards everything below; abort() may come from another thread
  std::uint64_t sequence_ = 0;
  bool aborted_ = false;
  std::deque<Message> unexpected_;  // sent, not yet received
  std::deque<PendingRecv> posted_;  // received, not yet sent
};

}  // namespace dtrain::comm
