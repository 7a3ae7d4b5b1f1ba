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

  // Every collective copies what it sends to itself; a group posts its
  // sends first, then its receives, so a group's receive finds the group's
  // send whatever their order in the group.
  RequestPtr start(const Collective& op) override;
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

  RequestPtr started(const char* op);
  RequestPtr collective(const Collective& op);
  RequestPtr p2p(const Collective& op);
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
