// A collective through shared memory (local_allreduce.hpp,
// local_exchange.hpp) as an Operation, for callers that do not wait at once:
// the engine runs it in its turn among the collectives, and its one lane
// takes each step once its peers' parts are there. Nothing signals their
// arrival, so the operation is polled.
#pragma once

#include <coroutine>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "comm/backends/ucx/group.hpp"
#include "comm/backends/ucx/immediate_collective.hpp"
#include "comm/collective.hpp"

namespace dtrain::comm::ucx {

// `Local` is an ImmediateCollective with ready() (a step can be taken),
// missing() (the ranks whose parts have not arrived) and involves(peer).
template <typename Local>
class ScheduledLocal final : public Operation {
 public:
  // `group` is the engine's, which outlives the operation.
  ScheduledLocal(Collective collective, const Group& group)
      : Operation(call_kind_name(collective.kind), Kind::collective), collective_(std::move(collective)), group_(group) {}

  std::vector<int> waiting_on() const override { return over() ? std::vector<int>{} : local_.missing(); }
  bool involves(int peer) const override { return !over() && local_.involves(peer); }
  bool polled() const override { return true; }

 protected:
  void prepare() override { local_.start(group_, sequence(), collective_); }
  Task lane(int, int) override {
    do {
      co_await Ready{&local_};
    } while (local_.advance() != ImmediateCollective::Progress::over);
    const ImmediateCollective::Outcome outcome = local_.outcome();
    if (outcome.status != DT_OK) raise(outcome.status, outcome.why);
  }

 private:
  // Resumes the lane once the collective can take a step.
  struct Ready {
    const Local* local;

    static bool ready(const void* self) { return static_cast<const Ready*>(self)->local->ready(); }
    bool await_ready() const noexcept { return local->ready(); }
    void await_suspend(std::coroutine_handle<Task::promise_type> handle) noexcept {
      handle.promise().awaiting = {&Ready::ready, this};
    }
    void await_resume() const noexcept {}
  };

  const Collective collective_;
  const Group& group_;
  Local local_;
};

}  // namespace dtrain::comm::ucx
