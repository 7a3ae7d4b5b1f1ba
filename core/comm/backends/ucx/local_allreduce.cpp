#include "comm/backends/ucx/local_allreduce.hpp"

#include <string>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/ucx/algorithms.hpp"

namespace dtrain::comm::ucx {

namespace {

// What a rank writes besides its data, for telling that ranks disagree.
std::uint32_t kind_of(DType dtype, ReduceOp op) {
  return static_cast<std::uint32_t>(dtype) << 16 | static_cast<std::uint32_t>(op);
}

std::string describe(std::uint32_t bytes, std::uint32_t kind) {
  return std::to_string(bytes) + " bytes of " + dtype_name(static_cast<DType>(kind >> 16)) + " " +
         reduce_op_name(static_cast<ReduceOp>(kind & 0xffff));
}

}  // namespace

void LocalAllreduce::start(const Group& group, std::uint64_t, const TensorView& send, const TensorView& recv,
                           ReduceOp op) {
  group_ = group;
  combine_ = Combine(op, recv.dtype);
  op_ = op;
  dtype_ = recv.dtype;
  count_ = recv.count;
  bytes_ = static_cast<std::uint32_t>(recv.bytes());
  out_ = static_cast<std::byte*>(recv.data);
  next_ = 0;
  over_ = false;
  outcome_ = {};
  stamp_ = group_.mailboxes->publish(send.data, bytes_, kind_of(dtype_, op_));
}

bool LocalAllreduce::arrived() const {
  for (; next_ < group_.size; ++next_) {
    if (mailboxes().arrived(next_, stamp_) == nullptr) return false;
  }
  return true;
}

void LocalAllreduce::finish() {
  over_ = true;
  if (!arrived()) {
    outcome_ = {DT_ERR_REMOTE, describe_rank(group_, next_) + " " + group_.transport->loss(next_, UCS_OK)};
    return;
  }
  const std::uint32_t kind = kind_of(dtype_, op_);
  for (int r = 0; r < group_.size; ++r) {
    const Mailboxes::Header* slot = mailboxes().arrived(r, stamp_);
    if (slot->bytes != bytes_ || slot->kind != kind) {
      outcome_ = {DT_ERR_MISMATCH, describe_rank(group_, r) + " contributed " + describe(slot->bytes, slot->kind) +
                                       ", this rank " + describe(bytes_, kind) +
                                       " (do all ranks pass the same counts, dtypes and reductions?)"};
      return;
    }
  }
  // This rank's own contribution is read from its mailbox too: the receive
  // buffer may be the send buffer.
  const auto data = [this](int r) { return Mailboxes::data(mailboxes().arrived(r, stamp_)); };
  combine_.apply(out_, data(0), data(1), count_);
  for (int r = 2; r < group_.size; ++r) combine_.apply(out_, data(r), count_);
  combine_.finish(out_, count_, group_.size);
}

bool LocalAllreduce::advance() {
  if (over_) return true;
  if (!settled()) return false;
  finish();
  return true;
}

bool LocalAllreduce::involves(int peer) const {
  return !over_ && peer != group_.rank && mailboxes().arrived(peer, stamp_) == nullptr;
}

int LocalAllreduce::waiting_on() const {
  if (over_ || arrived()) return -1;
  return next_;
}

std::vector<int> LocalAllreduce::missing() const {
  std::vector<int> peers;
  for (int r = 0; r < group_.size; ++r) {
    if (involves(r)) peers.push_back(r);
  }
  return peers;
}

namespace {

// Resumes a lane once the allreduce is settled.
struct Arrival {
  const LocalAllreduce* allreduce;

  static bool ready(const void* self) { return static_cast<const Arrival*>(self)->allreduce->settled(); }
  bool await_ready() const noexcept { return allreduce->settled(); }
  void await_suspend(std::coroutine_handle<Task::promise_type> handle) noexcept {
    handle.promise().awaiting = {&Arrival::ready, this};
  }
  void await_resume() const noexcept {}
};

class ScheduledLocalAllreduce final : public Operation {
 public:
  ScheduledLocalAllreduce(const TensorView& send, const TensorView& recv, ReduceOp op)
      : Operation("allreduce", Kind::collective), send_(send), recv_(recv), op_(op) {}

  std::vector<int> waiting_on() const override { return over() ? std::vector<int>{} : allreduce_.missing(); }
  bool involves(int peer) const override { return !over() && allreduce_.involves(peer); }
  bool polled() const override { return true; }

 protected:
  void prepare() override { allreduce_.start(group(), 0, send_, recv_, op_); }
  Task lane(int, int) override {
    co_await Arrival{&allreduce_};
    allreduce_.finish();
    const ImmediateAllreduce::Outcome outcome = allreduce_.outcome();
    if (outcome.status != DT_OK) raise(outcome.status, outcome.why);
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  const ReduceOp op_;
  LocalAllreduce allreduce_;
};

}  // namespace

std::unique_ptr<Operation> local_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) {
  return std::make_unique<ScheduledLocalAllreduce>(send, recv, op);
}

}  // namespace dtrain::comm::ucx
