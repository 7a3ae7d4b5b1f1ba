#include "comm/backends/ucx/local_collective.hpp"

#include <utility>

namespace dtrain::comm::ucx {

bool LocalCollective::arrived() const {
  for (; next_ < group_.size; ++next_) {
    if (mailboxes().arrived(next_, stamp_, awaited()) == nullptr) return false;
  }
  return true;
}

bool LocalCollective::involves(int peer) const {
  return !over_ && peer != group_.rank && mailboxes().arrived(peer, stamp_, awaited()) == nullptr;
}

int LocalCollective::waiting_on() const {
  if (over_ || arrived()) return -1;
  return next_;
}

std::vector<int> LocalCollective::missing() const {
  std::vector<int> peers;
  for (int r = 0; r < group_.size; ++r) {
    if (involves(r)) peers.push_back(r);
  }
  return peers;
}

void LocalCollective::lose_missing_peer() {
  fail(DT_ERR_REMOTE, describe_rank(group_, next_) + " " + group_.transport->loss(next_, UCS_OK));
}

void LocalCollective::fail(dt_status status, std::string why) {
  outcome_ = {status, std::move(why)};
  over_ = true;
}

}  // namespace dtrain::comm::ucx
