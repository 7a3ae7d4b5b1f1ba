// Runs the operations of one communicator over its transport. Collectives
// run one at a time in the order they were issued (so they complete in that
// order); point-to-point operations start at once and complete when matched.
// Any number may be outstanding.
//
// One lock serialises everything that touches UCP. A thread waiting on a
// request drives progress itself (wait()): it polls while anything happens
// and, after `spin_us` without an event, sleeps on the worker's event fd
// (ucp_worker_arm), so no message needs a hand-off between threads and ranks
// sharing a core do not starve each other. Meanwhile the progress thread
// stays parked, off the lock and the worker, until the last waiting caller
// leaves work behind or an operation nobody waits for is started; it drives
// what nobody waits for (non-blocking operations), polling briefly after
// each event and otherwise sleeping on the event fd.
//
// A collective that its caller waits for at once (a small allreduce over
// UCX; any collective through shared memory) runs without an Operation
// (run_now(), immediate_collective.hpp), in its place in the order of
// collectives and failed the same ways. Where every rank runs on this host,
// collectives go through shared memory instead of UCX (local_allreduce.hpp,
// local_exchange.hpp); nothing signals their progress, so whoever waits on
// one polls, sleeping a millisecond at a time once the spin is over.
//
// A failed peer (the endpoint's error callback) fails every pending operation
// with DT_ERR_REMOTE naming it, cancelling the receives posted on the worker,
// which UCP itself would leave pending forever. A peer that said goodbye
// (see Transport) fails only the operations still waiting on it. Peers on
// this host are also watched directly (see liveness.hpp) while there is
// work. abort() only raises a flag and wakes whoever drives progress, which
// completes everything with DT_ERR_ABORTED.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/backends/ucx/group.hpp"
#include "comm/backends/ucx/liveness.hpp"
#include "comm/backends/ucx/local_allreduce.hpp"
#include "comm/backends/ucx/local_exchange.hpp"
#include "comm/backends/ucx/mailboxes.hpp"
#include "comm/backends/ucx/small_allreduce.hpp"
#include "comm/backends/ucx/transport.hpp"
#include "comm/backends/ucx/tuning.hpp"

namespace dtrain::comm::ucx {

class Engine {
 public:
  // `identities[r]` is rank r's process, watched when on this host.
  Engine(std::unique_ptr<Transport> transport, int rank, std::uint32_t context, std::vector<int> world_ranks,
         std::vector<ProcessIdentity> identities, Tuning tuning);
  // Stops the progress thread, fails what is still pending, flushes and
  // closes the endpoints (bounded), then releases the worker.
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The communicator as its operations see it; lives as long as the engine.
  const Group& group() const { return group_; }
  int rank() const { return group_.rank; }
  int size() const { return group_.size; }
  const Tuning& tuning() const { return tuning_; }

  // Starts `op` (a collective once those before it have finished) and
  // returns its request. Never throws for a broken engine: the request then
  // completes at once with the reason.
  RequestPtr submit(std::unique_ptr<Operation> op);
  // Whether the next operation this thread submits is waited for at once:
  // the progress thread need not be woken for it, and a collective may
  // run here (run_now()).
  void expect_wait(bool on);
  // Hands collectives to shared memory. Every rank must do the same, before
  // the first operation.
  void share_memory(std::unique_ptr<Mailboxes> mailboxes);
  // Whether an allreduce of `bytes` goes through shared memory: any that
  // its header can describe, empty ones too, so that ranks that disagree
  // about the size still meet there and are told.
  bool shares_memory_for(std::size_t bytes) const {
    return group_.mailboxes != nullptr && bytes <= LocalAllreduce::kMaxBytes;
  }
  // Whether the other collectives go through shared memory: all of them,
  // whatever their sizes, for the same reason.
  bool exchanges_in_memory() const {
    return group_.mailboxes != nullptr && LocalExchange::fits(group_.mailboxes->shared_capacity(), group_.size);
  }
  // A collective this thread said it waits for (expect_wait()) that goes
  // through shared memory (`local`) or is an allreduce that fits
  // SmallAllreduce, while no collective is queued: runs it here and now and
  // returns its completed request, failed with DT_ERR_TIMEOUT naming the
  // silent peer after `timeout_ms`. Otherwise nullptr: submit() it.
  RequestPtr run_now(const Collective& collective, int timeout_ms, bool local);

  // Completes every pending request with DT_ERR_ABORTED and refuses new work.
  // Any thread; never blocks.
  void abort();

  // Fails everything pending, and all later operations, with `status`.
  void break_with(dt_status status, const std::string& message);

  // Waits for `request` until `deadline`, driving progress on this thread
  // for the first moments. Returns whether it completed.
  bool wait(const RequestPtr& request, Clock::time_point deadline);

  // The ranks `request` still waits for (for a collective queued behind
  // another, those of the one running); empty once it is over.
  std::vector<int> waiting_on(const Request& request);

 private:
  void run();
  // One round of progress; the caller holds mutex_. Returns whether
  // anything happened.
  bool tick();
  // Drives progress on the calling thread until done() or `deadline`;
  // returns done(). `start` is the time of the call, read by the caller.
  template <typename Done>
  bool drive(const Done& done, Clock::time_point start, Clock::time_point deadline);
  // Ticks until something happens or done(), a few rounds at most; the
  // caller holds mutex_. Returns whether anything happened.
  template <typename Done>
  bool poll(const Done& done);
  // Ends the running small allreduce, telling its caller if still there.
  void end_small(dt_status status, const std::string& message);
  std::string small_prefix() const;
  bool advance_operations();
  // Advances the immediate allreduce, ending it when over.
  ImmediateCollective::Progress advance_immediate();
  void handle_failures();
  // Whether another rank of this communicator is running or waiting to run
  // on this thread's core (looked up in /proc at most once a period).
  bool rank_shares_core(Clock::time_point now);
  // Checks that the processes of peers on this host still exist, once every
  // period, whichever thread drives progress.
  void watch_local_peers(Clock::time_point now);
  // Peers are of no more use: what waits on them fails, and everything else
  // too unless they left in good order. One error names every peer lost in
  // the round, so no rank's report depends on which loss it noticed first.
  void lose_peers(const std::vector<std::pair<int, ucs_status_t>>& lost);
  void fail_all(dt_status status, const std::string& reason);
  // Fails the operations with a transfer in flight with `peer`, which has
  // left or failed; the others go on.
  void fail_involving(int peer);
  void retire(std::unique_ptr<Operation> op);
  bool has_work() const;
  // What runs completes without events from the worker (polled()).
  bool polled_work() const;

  std::unique_ptr<Transport> transport_;
  const std::vector<int> world_ranks_;
  const std::vector<ProcessIdentity> identities_;
  const Tuning tuning_;
  Group group_;

  std::mutex mutex_;
  std::uint64_t operations_ = 0;   // numbers every operation, for messages
  std::uint64_t collectives_ = 0;  // sequence numbers, the same on every rank
  std::deque<std::unique_ptr<Operation>> queue_;         // collectives; the first is running
  std::vector<std::unique_ptr<Operation>> independent_;  // point-to-point
  std::vector<std::unique_ptr<Operation>> draining_;     // over, with transfers still in flight
  dt_status broken_status_ = DT_OK;
  std::string broken_reason_;
  std::uint64_t generation_ = 0;  // bumped by submit(), so the thread never sleeps on new work
  bool sleeping_ = false;    // the progress thread is asleep on the event fd
  bool parked_ = false;      // the progress thread is asleep on lease_cv_
  // While a caller submits or waits, it drives progress itself and holds a
  // lease (steady-clock nanoseconds) during which the progress thread stays
  // off the lock, asleep on lease_cv_: a second thread contending for the
  // worker costs more than it brings, the more so with more ranks than cores.
  std::atomic<std::int64_t> caller_lease_until_{0};
  std::atomic<int> callers_{0};  // threads in wait()
  std::condition_variable lease_cv_;
  void lease_until(Clock::time_point until);
  const bool oversubscribed_;  // more ranks on this host than cores: waiting yields
  std::atomic<std::int64_t> next_watch_{0};  // when local peers are next checked
  std::atomic<bool> shares_core_{false};       // rank_shares_core()'s last answer,
  std::atomic<std::int64_t> sharing_until_{0};  // and until when it holds

  // Set by share_memory(): group_.mailboxes.
  std::unique_ptr<Mailboxes> mailboxes_;
  // The collective a caller runs through run_now(), one of the three; it
  // counts as the running collective (the queue waits for it).
  SmallAllreduce small_;
  LocalAllreduce local_;
  LocalExchange exchange_;
  ImmediateCollective* now_ = &small_;
  const char* small_name_ = "allreduce";  // now_'s collective, for messages
  std::atomic<bool> small_running_{false};
  std::uint64_t small_number_ = 0;
  struct SmallOutcome {
    dt_status status = DT_OK;
    std::string message;
  };
  SmallOutcome* small_outcome_ = nullptr;  // its caller's, until it gives up waiting
  const RequestPtr completed_;  // what a small allreduce that succeeded returns

  bool abort_handled_ = false;
  bool cut_short_ = false;  // requests were failed wholesale: no goodbye at teardown

  std::atomic<bool> abort_requested_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace dtrain::comm::ucx
