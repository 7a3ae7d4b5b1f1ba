#include "comm/backends/ucx/small_allreduce.hpp"

#include <utility>

#include "comm/schedules/tags.hpp"

namespace dtrain::comm::ucx {

void SmallAllreduce::start(const Group& group, std::uint64_t sequence, const Collective& allreduce) {
  group_ = group;
  sequence_ = sequence;
  combine_ = Combine(allreduce.op, allreduce.recv.dtype);
  count_ = allreduce.recv.count;
  bytes_ = allreduce.recv.bytes();
  mine_ = static_cast<const std::byte*>(allreduce.send.data);
  work_ = static_cast<std::byte*>(allreduce.recv.data);
  mask_ = 1;
  step_ = 1;  // as the doubling rounds of recursive.cpp: 0 is the fold's
  failure_ = nullptr;
  post();
}

void SmallAllreduce::post() {
  const int peer = group_.rank ^ mask_;
  // The send first: the peer waits for it, and posting the receive (a
  // search of the unexpected queue and a request) would delay it (8 bytes
  // at 2 ranks: 0.25 against 0.28 us). The peer's message is matched as it
  // would have been the other way round: nothing makes progress between
  // the two calls.
  group_.transport->send(out_, peer, collective_tag(group_.context, group_.rank, sequence_, step_), mine_, bytes_);
  group_.transport->recv(in_, peer, collective_tag(group_.context, peer, sequence_, step_), incoming_, bytes_);
}

ImmediateCollective::Progress SmallAllreduce::advance() {
  Progress progress = Progress::none;
  while (quiescent()) {
    if (!in_.ok() || !out_.ok()) {
      failure_ = in_.ok() ? &out_ : &in_;
      return Progress::over;
    }
    combine_.apply(work_, mine_, incoming_, count_);
    mine_ = work_;
    mask_ <<= 1;
    ++step_;
    if (mask_ >= group_.size) {
      combine_.finish(work_, count_, group_.size);
      return Progress::over;
    }
    post();
    progress = Progress::some;
  }
  return progress;
}

ImmediateCollective::Outcome SmallAllreduce::outcome() const {
  if (failure_ == nullptr) return {};
  auto [status, why] = transfer_error(group_, *failure_);
  return {status, std::move(why)};
}

int SmallAllreduce::waiting_on() const {
  if (in_.pending()) return in_.peer;
  return out_.pending() ? out_.peer : -1;
}

int SmallAllreduce::cancel(Transport& transport) {
  transport.cancel(in_);
  return out_.pending() ? out_.peer : -1;
}

}  // namespace dtrain::comm::ucx
