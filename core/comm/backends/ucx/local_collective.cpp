#include "comm/backends/ucx/local_collective.hpp"

#include <utility>

namespace dtrain::comm::ucx {

void LocalCollective::start(const Group& group, std::uint64_t sequence, const Collective& collective) {
  group_ = group;
  over_ = false;
  outcome_ = {};
  next_ = 0;
  only_ = -1;
  prepare(sequence, collective);
  stamp_ = group_.mailboxes->clearance();
  clearing_ = stamp_ != 0;
  // Most often the peers are there already.
  if (clearing_ && arrived()) clearing_ = false;
  if (!clearing_) begin();
}

ImmediateCollective::Progress LocalCollective::advance() {
  if (!clearing_) return step();
  if (over_ || !ready()) return over_ ? Progress::over : Progress::none;
  if (!arrived()) {
    lose_missing_peer();
    return Progress::over;
  }
  clearing_ = false;
  begin();
  return over_ ? Progress::over : Progress::some;
}

bool LocalCollective::has_part(int peer) const {
  return clearing_ ? mailboxes().written(peer, stamp_) : mailboxes().arrived(peer, stamp_, awaited()) != nullptr;
}

bool LocalCollective::arrived() const {
  if (only_ >= 0 && !clearing_) {
    next_ = only_;
    return has_part(only_);
  }
  for (; next_ < group_.size; ++next_) {
    if (!has_part(next_)) return false;
  }
  // Every peer has written its contribution to stamp_ (before its result).
  group_.mailboxes->seen(stamp_);
  return true;
}

bool LocalCollective::involves(int peer) const {
  return !over_ && peer != group_.rank && (clearing_ || only_ < 0 || peer == only_) && !has_part(peer);
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
