// The backend of a world of one rank. Collectives are copies; a message sent
// to oneself is matched to a receive by tag, buffered when no receive is
// posted yet, so a trainer written for many ranks runs unchanged on one.
#pragma once

#include <cstdint>
#include <deque>
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
  };

  RequestPtr finished(const char* op);
  RequestPtr started(const char* op);
  static void deliver(const TensorView& to, const RequestPtr& request, DType dtype, const void* bytes,
                      std::int64_t count);

  std::mutex mutex_;  // guards everything below; abort() may come from another thread
  std::uint64_t sequence_ = 0;
  bool aborted_ = false;
  std::deque<Message> unexpected_;  // sent, not yet received
  std::deque<PendingRecv> posted_;  // received, not yet sent
};

}  // namespace dtrain::comm
