#include <cstddef>
#include <deque>
#include <vector>

#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/tags.hpp"

namespace dtrain::comm::schedule {

namespace {

// Every send and receive of the group posted at once, in the caller's
// order, then awaited together: no rank waits for a message before it has
// posted all of its own, so exchanges that would deadlock one call at a
// time complete. Tags are those of dt_send / dt_recv, so a group's messages
// match single calls too. Sends to oneself are buffered, as dt_send's are:
// the group completes without waiting for their receive, which may come
// later.
class P2pGroup final : public Operation {
 public:
  explicit P2pGroup(std::vector<P2pOp> ops) : Operation("p2p_group", Kind::point_to_point), ops_(std::move(ops)) {}

 protected:
  Task lane(int, int) override {
    std::vector<Transfer*> awaited;
    std::vector<Transfer*> to_self;
    for (const P2pOp& op : ops_) {
      Transfer& t = transfer();
      if (!op.is_send) {
        recv_tagged(t, op.peer, p2p_tag(group().context, op.peer, op.tag), op.buf.data, op.buf.bytes());
        awaited.push_back(&t);
        continue;
      }
      const void* data = op.buf.data;
      if (op.peer == rank()) {
        const auto* bytes = static_cast<const std::byte*>(op.buf.data);
        data = copies_.emplace_back(bytes, bytes + op.buf.bytes()).data();
        to_self.push_back(&t);
      } else {
        awaited.push_back(&t);
      }
      send_tagged(t, op.peer, p2p_tag(group().context, rank(), op.tag), data, op.buf.bytes());
    }
    co_await all_of(awaited);
    if (to_self.empty()) co_return;
    complete_early();
    co_await all_of(to_self);
  }

 private:
  const std::vector<P2pOp> ops_;
  // The data of sends to oneself, owned until they are received; a deque
  // keeps each copy in place while more are added.
  std::deque<std::vector<std::byte>> copies_;
};

}  // namespace

std::unique_ptr<Operation> p2p_group(const std::vector<P2pOp>& ops) { return std::make_unique<P2pGroup>(ops); }

}  // namespace dtrain::comm::schedule
