#include <vector>

#include "comm/backends/ucx/algorithms.hpp"
#include "comm/backends/ucx/tags.hpp"

namespace dtrain::comm::ucx {

namespace {

// Every send and receive of the group posted at once, in the caller's
// order, then awaited together: no rank waits for a message before it has
// posted all of its own, so exchanges that would deadlock one call at a
// time complete. Tags are those of dt_send / dt_recv, so a group's messages
// match single calls too.
class P2pGroup final : public Operation {
 public:
  explicit P2pGroup(std::vector<P2pOp> ops) : Operation("p2p_group", Kind::point_to_point), ops_(std::move(ops)) {}

 protected:
  Task lane(int, int) override {
    std::vector<Transfer*> posted;
    for (const P2pOp& op : ops_) {
      posted.push_back(&transfer());
      if (op.is_send) {
        send_tagged(*posted.back(), op.peer, p2p_tag(group().context, rank(), op.tag), op.buf.data, op.buf.bytes());
      } else {
        recv_tagged(*posted.back(), op.peer, p2p_tag(group().context, op.peer, op.tag), op.buf.data, op.buf.bytes());
      }
    }
    co_await all_of(posted);
  }

 private:
  const std::vector<P2pOp> ops_;
};

}  // namespace

std::unique_ptr<Operation> p2p_group(const std::vector<P2pOp>& ops) { return std::make_unique<P2pGroup>(ops); }

}  // namespace dtrain::comm::ucx
