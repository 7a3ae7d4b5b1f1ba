#include "comm/backends/ucx/engine.hpp"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <chrono>

#include "base/log.hpp"

namespace dtrain::comm::ucx {

namespace {

// How long a thread sleeps on the worker's events at most, with and without
// work: progress still needs the odd round, for UCP's keepalive and to watch
// local peers (with work). A worker that cannot be armed is polled every
// millisecond, and so is work that completes through shared memory.
constexpr auto kSleepWithWork = std::chrono::milliseconds(50);
constexpr auto kSleepIdle = std::chrono::milliseconds(500);
constexpr auto kSleepUnarmed = std::chrono::milliseconds(1);
// Teardown: how long cancelled operations get to settle, and endpoints to flush.
constexpr auto kSettleTime = std::chrono::milliseconds(500);
constexpr auto kFlushTime = std::chrono::seconds(2);
// How long after submitting an operation the caller alone drives progress:
// long enough for a blocking caller to reach wait(), short enough that a
// non-blocking operation soon gets the progress thread.
constexpr auto kSubmitLease = std::chrono::microseconds(20);
// The lease a waiting caller renews on every round: the progress thread
// checks back this often while a caller drives progress.
constexpr auto kWaitLease = std::chrono::milliseconds(1);
// How long whether another rank shares this core is taken to hold: the
// scheduler moves processes far less often.
constexpr auto kSharingValid = std::chrono::milliseconds(10);
// How long the progress thread polls after an event before sleeping on the
// worker's events.
constexpr auto kBackgroundSpin = std::chrono::microseconds(20);
// How often peers on this host are checked for being alive, while there is work.
constexpr auto kWatchPeriod = std::chrono::milliseconds(250);
// Rounds of progress a waiting caller makes between two looks at the clock.
constexpr int kPollRounds = 16;
// Looks at the peers' stamps a caller of a shared-memory allreduce takes
// before the first round of progress (about a microsecond).
constexpr int kFirstLooks = 32;

// A spin-wait hint to the core.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The engine whose next operation started on this thread is waited for at
// once (expect_wait()).
thread_local const Engine* t_waiting_for = nullptr;

// A poll() timeout in whole milliseconds, rounded up so that a sleep never
// ends before `until`.
int poll_timeout(Clock::time_point now, Clock::time_point until) {
  if (until <= now) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
  return static_cast<int>(std::min<std::int64_t>(ms, kSleepIdle.count()));
}

}  // namespace

Engine::Engine(std::unique_ptr<Transport> transport, int rank, std::uint32_t context, std::vector<int> world_ranks,
               std::vector<ProcessIdentity> identities, Tuning tuning)
    : transport_(std::move(transport)),
      world_ranks_(std::move(world_ranks)),
      identities_(std::move(identities)),
      tuning_(tuning),
      oversubscribed_(outnumber_their_cores(identities_, identities_[rank])),
      completed_(std::make_shared<Request>("collective", 0)) {
  completed_->complete(DT_OK);
  group_.transport = transport_.get();
  group_.messages = transport_.get();
  group_.rank = rank;
  group_.size = transport_->size();
  group_.context = context;
  group_.world_ranks = &world_ranks_;
  group_.tuning = &tuning_;
  group_.pipelining = {tuning_.chunk_bytes, tuning_.pipeline_depth};
  next_watch_.store((Clock::now() + kWatchPeriod).time_since_epoch().count(), std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
    lease_cv_.notify_one();
  }
  transport_->signal();
  thread_.join();

  std::lock_guard<std::mutex> lock(mutex_);
  if (!queue_.empty() || !independent_.empty() || small_running_.load(std::memory_order_relaxed)) {
    fail_all(DT_ERR_ABORTED, "the communicator was destroyed");
  }
  const auto settle_until = Clock::now() + kSettleTime;
  while ((!draining_.empty() || !small_.quiescent()) && Clock::now() < settle_until) {
    if (!tick()) std::this_thread::yield();
  }
  const auto flush_until = Clock::now() + kFlushTime;
  // Leaving in good order: the peers must not mistake it for a failure. A
  // rank that gave up on operations leaves without a word, so its peers
  // fail theirs at once rather than at their deadline.
  if (!cut_short_) transport_->say_goodbye(flush_until);
  // After giving up there is nothing worth flushing, and a stopped peer
  // would only hold the flush until the deadline.
  transport_->close_all(flush_until, cut_short_);
  // The worker goes first: destroying it may still call back into transfers
  // of operations that never settled.
  transport_.reset();
  draining_.clear();
}

void Engine::lease_until(Clock::time_point until) {
  caller_lease_until_.store(until.time_since_epoch().count(), std::memory_order_relaxed);
}

void Engine::expect_wait(bool on) {
  if (on) {
    t_waiting_for = this;
  } else if (t_waiting_for == this) {
    t_waiting_for = nullptr;
  }
}

RequestPtr Engine::submit(std::unique_ptr<Operation> op) {
  const bool waited_for = std::exchange(t_waiting_for, nullptr) == this;
  // Before taking the lock, so that the progress thread, seeing the lease,
  // lets go of it at its next round.
  const bool unattended = callers_.load(std::memory_order_relaxed) == 0;
  if (unattended) lease_until(Clock::now() + kSubmitLease);
  std::unique_lock<std::mutex> lock(mutex_);
  const bool collective = op->kind() == Operation::Kind::collective;
  op->set_label(++operations_, collective ? collectives_++ : 0);
  op->bind(group_);
  RequestPtr request = op->request();
  if (abort_requested_.load(std::memory_order_acquire) && !abort_handled_) {
    abort_handled_ = true;
    fail_all(DT_ERR_ABORTED, "aborted");
  }
  if (broken_status_ != DT_OK) {
    request->complete(broken_status_, op->prefix() + ": not started: " + broken_reason_);
    return request;
  }
  if (collective) {
    queue_.push_back(std::move(op));
  } else {
    op->start();
    independent_.push_back(std::move(op));
  }
  advance_operations();
  ++generation_;
  // The progress thread may be parked until the lease of a caller that has
  // left runs out (up to kWaitLease): an operation nobody is about to wait
  // for needs it back once the submit lease ends. A blocking caller drives
  // progress itself and spares the wake-up.
  if (parked_ && unattended && !waited_for) lease_cv_.notify_one();
  const bool wake = sleeping_;
  lock.unlock();
  if (wake) transport_->signal();
  return request;
}

void Engine::abort() {
  abort_requested_.store(true, std::memory_order_release);
  {
    // Under the lock, so that a progress thread about to park cannot miss it.
    std::lock_guard<std::mutex> lock(mutex_);
    lease_cv_.notify_one();
  }
  transport_->signal();
}

void Engine::break_with(dt_status status, const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_all(status, message);
}

void Engine::share_memory(std::unique_ptr<Mailboxes> mailboxes) {
  std::lock_guard<std::mutex> lock(mutex_);
  mailboxes_ = std::move(mailboxes);
  group_.mailboxes = mailboxes_.get();
}

RequestPtr Engine::run_now(const Collective& collective, int timeout_ms, bool local) {
  if (t_waiting_for != this) return nullptr;
  if (!local && !(collective.kind == CallKind::allreduce && SmallAllreduce::fits(group_.size, collective.recv.bytes()))) {
    return nullptr;
  }
  const auto done = [this] { return !small_running_.load(std::memory_order_acquire); };
  SmallOutcome outcome;
  std::uint64_t number = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Behind a queued collective it would have to wait its turn; a broken
    // engine or a pending abort is submit()'s to report.
    if (!queue_.empty() || broken_status_ != DT_OK || abort_requested_.load(std::memory_order_acquire) ||
        small_running_.load(std::memory_order_relaxed) || !small_.quiescent()) {
      return nullptr;
    }
    t_waiting_for = nullptr;
    number = ++operations_;
    small_number_ = number;
    small_outcome_ = &outcome;
    small_running_.store(true, std::memory_order_relaxed);
    small_name_ = call_kind_name(collective.kind);
    now_ = !local ? static_cast<ImmediateCollective*>(&small_)
           : collective.kind == CallKind::allreduce ? static_cast<ImmediateCollective*>(&local_)
                                                    : &exchange_;
    now_->start(group_, collectives_++, collective);
    ++generation_;
    // Through shared memory, a few looks at the peers' stamps first: with
    // ranks in step that is all it takes, and the worker has nothing to do
    // for it. Not when ranks outnumber cores: the peer may need this one.
    for (int i = 0; local && !oversubscribed_ && i < kFirstLooks; ++i) {
      if (advance_immediate() != ImmediateCollective::Progress::none) break;
      cpu_relax();
    }
    // A first few rounds of progress before letting go of the lock or
    // reading the clock: with ranks in step, the peers' answers are often
    // there by then, and at a few bytes the second lock and the clock
    // would cost a good part of the operation.
    poll(done);
  }
  if (!done()) {
    const auto start = Clock::now();
    if (!drive(done, start, start + std::chrono::milliseconds(timeout_ms))) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (small_running_.load(std::memory_order_relaxed)) {
        // It goes on without its caller, holding up the queue like any
        // collective that timed out.
        small_outcome_ = nullptr;
        const int silent = now_->waiting_on();
        outcome.status = DT_ERR_TIMEOUT;
        outcome.message =
            timeout_message(small_prefix(), timeout_ms, silent < 0 ? "" : describe_rank(group_, silent));
      }
    }
  }
  if (outcome.status == DT_OK) return completed_;
  auto request = std::make_shared<Request>(small_name_, number);
  request->complete(outcome.status, outcome.message);
  return request;
}

void Engine::end_small(dt_status status, const std::string& message) {
  if (small_outcome_ != nullptr) *small_outcome_ = {status, message};
  small_outcome_ = nullptr;
  small_running_.store(false, std::memory_order_release);
}

std::string Engine::small_prefix() const {
  return "rank " + std::to_string(group_.rank) + ": " + small_name_ + " #" + std::to_string(small_number_);
}

bool Engine::wait(const RequestPtr& request, Clock::time_point deadline) {
  if (request->done()) return true;
  return drive([&request] { return request->done(); }, Clock::now(), deadline);
}

template <typename Done>
bool Engine::drive(const Done& done, Clock::time_point start, Clock::time_point deadline) {
  // The caller drives progress itself until done: polling while something
  // happened within spin_us, then sleeping on the worker's events. Handing
  // over to the progress thread would cost a wake-up at each end; the
  // thread keeps off the lock meanwhile (the lease).
  const auto spin = std::chrono::microseconds(tuning_.spin_us);
  callers_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  auto last_event = start;
  for (auto now = start; !done(); now = Clock::now()) {
    if (now >= deadline) break;
    lease_until(now + kWaitLease);
    watch_local_peers(now);
    lock.lock();
    if (poll(done)) {
      last_event = now;
      // Done: the lock is kept for handing over below.
      if (done()) break;
      lock.unlock();
      continue;
    }
    if (done()) break;
    if (now - last_event < spin) {
      lock.unlock();
      // A rank waiting for this core (ranks outnumbering cores, or two put
      // on one core by the scheduler) gets it at once; otherwise giving it
      // up would only hand it to other work. Sleeping instead would cost the
      // wake-up and, on a loaded machine, often a whole time slice before
      // this rank has its core back.
      if (oversubscribed_ || rank_shares_core(now)) std::this_thread::yield();
      continue;
    }
    const Transport::Arm armed = transport_->arm();
    if (armed == Transport::Arm::busy) {
      lock.unlock();
      continue;
    }
    const bool polled = polled_work();
    lock.unlock();
    const auto wake_by = std::min(
        deadline, now + (armed == Transport::Arm::unavailable || polled ? kSleepUnarmed : kSleepWithWork));
    lease_until(wake_by + kWaitLease);
    pollfd event{transport_->event_fd(), POLLIN, 0};
    // Polled work sleeps again at once unless the worker had an event: its
    // peer is late, and spinning again would only take the core.
    if (::poll(&event, 1, poll_timeout(now, wake_by)) > 0 || !polled) last_event = Clock::now();
  }
  if (callers_.fetch_sub(1, std::memory_order_relaxed) == 1) {
    // The last caller out hands what is left to the progress thread at once.
    if (!lock.owns_lock()) lock.lock();
    lease_until(Clock::time_point());
    if (has_work()) {
      ++generation_;
      lease_cv_.notify_one();
      if (sleeping_) transport_->signal();
    }
  }
  return done();
}

template <typename Done>
bool Engine::poll(const Done& done) {
  // Rounds without an event are cheap (no clock, no lock): a few of them
  // catch the peer's answer sooner than a full pass of the caller's loop.
  const int rounds = oversubscribed_ ? 1 : kPollRounds;
  for (int i = 0; i < rounds && !done(); ++i) {
    if (tick()) return true;
  }
  return false;
}

std::vector<int> Engine::waiting_on(const Request& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& op : queue_) {
    if (op->request().get() == &request) return queue_.front()->waiting_on();
  }
  for (const auto& op : independent_) {
    if (op->request().get() == &request) return op->waiting_on();
  }
  return {};
}

void Engine::run() {
  auto last_event = Clock::now();
  while (!stop_.load(std::memory_order_acquire)) {
    std::uint64_t seen = 0;
    bool busy = false;
    bool work = false;
    bool polled = false;
    Transport::Arm armed = Transport::Arm::busy;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const Clock::time_point lease(Clock::duration(caller_lease_until_.load(std::memory_order_relaxed)));
      const bool attended = callers_.load(std::memory_order_relaxed) > 0;
      if (attended || Clock::now() < lease) {
        // A caller drives progress; the last one out wakes this thread when
        // it leaves work behind, and so does one that starts an operation
        // nobody waits for, or an abort. While callers come and go (a loop
        // of blocking calls), waking to look would only take their cores
        // and arm the worker, which makes every peer's send a signal.
        parked_ = true;
        lease_cv_.wait_until(lock, attended ? Clock::now() + kSleepIdle : lease);
        parked_ = false;
        continue;
      }
      seen = generation_;
      busy = tick();
      work = has_work();
    }
    const auto now = Clock::now();
    if (work) watch_local_peers(now);
    if (busy) {
      last_event = now;
      continue;
    }
    // A short poll catches the next step of a pipelined operation without a
    // wake-up; a long one would take the core from the caller's computation.
    if (work && now - last_event < kBackgroundSpin) continue;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // New work, or an abort, since the last round: no sleeping on it.
      if (generation_ != seen || (abort_requested_.load() && !abort_handled_)) continue;
      armed = transport_->arm();
      if (armed == Transport::Arm::busy) continue;
      sleeping_ = true;
      work = has_work();
      polled = polled_work();
    }
    const auto sleep = armed == Transport::Arm::unavailable || polled ? kSleepUnarmed
                       : work                                         ? kSleepWithWork
                                                                      : kSleepIdle;
    pollfd event{transport_->event_fd(), POLLIN, 0};
    ::poll(&event, 1, static_cast<int>(sleep.count()));
    std::lock_guard<std::mutex> lock(mutex_);
    sleeping_ = false;
    last_event = Clock::now();
  }
}

bool Engine::has_work() const {
  return !queue_.empty() || !independent_.empty() || !draining_.empty() ||
         small_running_.load(std::memory_order_relaxed) || !small_.quiescent();
}

bool Engine::polled_work() const {
  if (small_running_.load(std::memory_order_relaxed)) return now_->polled();
  return !queue_.empty() && queue_.front()->started() && queue_.front()->polled();
}

bool Engine::tick() {
  unsigned events = 0;
  // Drain what UCP has ready, but come back to the operations now and then.
  for (int i = 0; i < 64; ++i) {
    const unsigned n = transport_->progress();
    if (n == 0) break;
    events += n;
  }
  bool moved = false;
  if (transport_->has_departures()) {
    for (int peer : transport_->take_departures()) fail_involving(peer);
    moved = true;
  }
  if (transport_->has_failures()) {
    handle_failures();
    moved = true;
  }
  if (abort_requested_.load(std::memory_order_acquire) && !abort_handled_) {
    abort_handled_ = true;
    fail_all(DT_ERR_ABORTED, "aborted");
    moved = true;
  }
  if (advance_operations()) moved = true;
  return events > 0 || moved;
}

ImmediateCollective::Progress Engine::advance_immediate() {
  if (!small_running_.load(std::memory_order_relaxed)) return ImmediateCollective::Progress::none;
  const ImmediateCollective::Progress progress = now_->advance();
  if (progress == ImmediateCollective::Progress::over) {
    const ImmediateCollective::Outcome outcome = now_->outcome();
    end_small(outcome.status, outcome.status == DT_OK ? std::string() : small_prefix() + ": " + outcome.why);
  }
  return progress;
}

bool Engine::advance_operations() {
  bool moved = false;
  // A step of a long one counts, or its caller would go to sleep between
  // its pieces.
  if (advance_immediate() != ImmediateCollective::Progress::none) moved = true;
  while (!queue_.empty()) {
    Operation& head = *queue_.front();
    if (!head.started()) {
      // A small allreduce still running was issued first.
      if (small_running_.load(std::memory_order_relaxed)) break;
      head.start();
      moved = true;
    } else if (head.advance()) {
      moved = true;
    }
    if (!head.over()) break;
    retire(std::move(queue_.front()));
    queue_.pop_front();
    moved = true;
  }
  for (auto& op : independent_) {
    if (op->advance()) moved = true;
    if (op->over()) retire(std::move(op));
  }
  std::erase(independent_, nullptr);
  std::erase_if(draining_, [](const std::unique_ptr<Operation>& op) { return op->quiescent(); });
  return moved;
}

void Engine::retire(std::unique_ptr<Operation> op) {
  if (!op->quiescent()) draining_.push_back(std::move(op));
}

void Engine::handle_failures() {
  // A goodbye may still be queued behind the failure: take it in first.
  for (int i = 0; i < 64 && transport_->progress() > 0; ++i) {
  }
  for (int peer : transport_->take_departures()) fail_involving(peer);
  const auto lost = transport_->take_failures();
  // UCP wants a failed endpoint closed, and only forcibly.
  for (const auto& [peer, status] : lost) transport_->force_close(peer);
  lose_peers(lost);
}

void Engine::lose_peers(const std::vector<std::pair<int, ucs_status_t>>& lost) {
  std::string reasons;
  for (const auto& [peer, status] : lost) {
    if (transport_->departed(peer)) {
      fail_involving(peer);
      continue;
    }
    const std::string reason = describe_rank(group_, peer) + " " + transport_->loss(peer, status);
    DT_LOG(warn) << "rank " << group_.rank << ": " << reason;
    reasons += (reasons.empty() ? "" : "; ") + reason;
  }
  if (!reasons.empty()) fail_all(DT_ERR_REMOTE, reasons);
}

bool Engine::rank_shares_core(Clock::time_point now) {
  if (now.time_since_epoch().count() < sharing_until_.load(std::memory_order_relaxed)) {
    return shares_core_.load(std::memory_order_relaxed);
  }
  bool shared = false;
  const int cpu = sched_getcpu();
  const ProcessIdentity& me = identities_[group_.rank];
  for (int r = 0; cpu >= 0 && r < group_.size && !shared; ++r) {
    shared = r != group_.rank && me.can_watch(identities_[r]) && runnable_on(identities_[r], cpu);
  }
  shares_core_.store(shared, std::memory_order_relaxed);
  sharing_until_.store((now + kSharingValid).time_since_epoch().count(), std::memory_order_relaxed);
  return shared;
}

void Engine::watch_local_peers(Clock::time_point now) {
  // One thread at a time, once a period: whoever drives progress.
  std::int64_t due = next_watch_.load(std::memory_order_relaxed);
  if (now.time_since_epoch().count() < due) return;
  const std::int64_t next = (now + kWatchPeriod).time_since_epoch().count();
  if (!next_watch_.compare_exchange_strong(due, next, std::memory_order_relaxed)) return;
  const ProcessIdentity& me = identities_[group_.rank];
  std::vector<int> dead;
  // /proc is read without the lock; only the verdicts need it.
  for (int r = 0; r < group_.size; ++r) {
    if (r != group_.rank && me.can_watch(identities_[r]) && process_gone(identities_[r])) dead.push_back(r);
  }
  if (dead.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // A goodbye sent just before exiting may still be on its way in.
  for (int i = 0; i < 64 && transport_->progress() > 0; ++i) {
  }
  for (int peer : transport_->take_departures()) fail_involving(peer);
  std::vector<std::pair<int, ucs_status_t>> lost;
  for (int peer : dead) {
    if (transport_->gone(peer)) continue;
    transport_->declare_failed(peer, "its process " + std::to_string(identities_[peer].pid) + " has exited");
    lost.emplace_back(peer, UCS_ERR_ENDPOINT_TIMEOUT);
  }
  lose_peers(lost);
}

void Engine::fail_involving(int peer) {
  const std::string reason = describe_rank(group_, peer) + " " + transport_->loss(peer, UCS_OK);
  auto affected = [peer](const std::unique_ptr<Operation>& op) { return op->started() && op->involves(peer); };
  for (auto& op : queue_) {
    if (affected(op)) op->fail(DT_ERR_REMOTE, op->prefix() + ": " + reason);
  }
  for (auto& op : independent_) {
    if (affected(op)) op->fail(DT_ERR_REMOTE, op->prefix() + ": " + reason);
  }
  if (small_running_.load(std::memory_order_relaxed) && now_->involves(peer)) {
    now_->cancel(*transport_);
    end_small(DT_ERR_REMOTE, small_prefix() + ": " + reason);
  }
  // advance_operations() retires them.
}

void Engine::fail_all(dt_status status, const std::string& reason) {
  if (broken_status_ == DT_OK) {
    broken_status_ = status;
    broken_reason_ = reason;
  }
  std::vector<int> sending;
  auto fail_one = [&](std::unique_ptr<Operation>& op) {
    if (op->fail(status, op->prefix() + ": " + reason)) cut_short_ = true;
    for (int peer : op->sending_to()) sending.push_back(peer);
    retire(std::move(op));
  };
  for (auto& op : queue_) fail_one(op);
  queue_.clear();
  for (auto& op : independent_) fail_one(op);
  independent_.clear();
  for (auto& op : draining_) {
    for (int peer : op->sending_to()) sending.push_back(peer);
  }
  if (small_running_.load(std::memory_order_relaxed)) {
    cut_short_ = true;
    end_small(status, small_prefix() + ": " + reason);
  }
  if (!small_.quiescent()) {
    if (const int peer = small_.cancel(*transport_); peer >= 0) sending.push_back(peer);
  }
  // Sends cannot be cancelled in UCP; closing their endpoint ends them, so
  // that no buffer of an aborted operation stays in use.
  std::sort(sending.begin(), sending.end());
  sending.erase(std::unique(sending.begin(), sending.end()), sending.end());
  for (int peer : sending) transport_->force_close(peer);
}

}  // namespace dtrain::comm::ucx
