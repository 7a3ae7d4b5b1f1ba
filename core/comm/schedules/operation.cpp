#include "comm/schedules/operation.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "comm/schedules/tags.hpp"

namespace dtrain::comm::schedule {

namespace {

// Set once this thread's cache is destroyed: frames freed later (by the
// destructors of static objects) go straight back to the heap. Trivially
// destructible, so it can still be read then.
thread_local bool t_frame_cache_gone = false;

// The last lane frame this thread freed, kept for the next one of its size.
struct FrameCache {
  void* frame = nullptr;
  std::size_t bytes = 0;

  FrameCache() = default;
  FrameCache(const FrameCache&) = delete;
  FrameCache& operator=(const FrameCache&) = delete;
  ~FrameCache() {
    if (frame != nullptr) ::operator delete(frame, bytes);
    t_frame_cache_gone = true;
  }
};

thread_local FrameCache t_frame_cache;

}  // namespace

void* Task::promise_type::operator new(std::size_t bytes) {
  if (t_frame_cache_gone) return ::operator new(bytes);
  FrameCache& cache = t_frame_cache;
  if (cache.frame != nullptr && cache.bytes == bytes) return std::exchange(cache.frame, nullptr);
  return ::operator new(bytes);
}

void Task::promise_type::operator delete(void* frame, std::size_t bytes) noexcept {
  if (t_frame_cache_gone) {
    ::operator delete(frame, bytes);
    return;
  }
  FrameCache& cache = t_frame_cache;
  if (cache.frame != nullptr) ::operator delete(cache.frame, cache.bytes);
  cache.frame = frame;
  cache.bytes = bytes;
}

bool Task::step() {
  auto& promise = handle_.promise();
  if (promise.awaiting.ready != nullptr && !promise.awaiting.ready(promise.awaiting.awaiter)) return false;
  promise.awaiting = {};
  handle_.resume();
  if (promise.error) std::rethrow_exception(std::exchange(promise.error, nullptr));
  return true;
}

void Task::reset() {
  if (handle_) handle_.destroy();
  handle_ = {};
}

Operation::Operation(const char* name, Kind kind) : name_(name), kind_(kind) {}

// Lanes go first: their frames may hold references into the operation.
Operation::~Operation() { slots_.clear(); }

void Operation::set_label(std::uint64_t number, std::uint64_t sequence) {
  request_ = std::make_shared<Request>(name_, number);
  sequence_ = sequence;
}

std::string describe_rank(const Group& group, int r) {
  std::string text = "rank " + std::to_string(r);
  if (group.world_ranks != nullptr && (*group.world_ranks)[r] != r) {
    text += " (world rank " + std::to_string((*group.world_ranks)[r]) + ")";
  }
  return text;
}

std::string Operation::prefix() const { return "rank " + std::to_string(group_.rank) + ": " + request_->what(); }

Transfer& Operation::transfer() {
  Transfer* t = nullptr;
  if (inline_used_ < kInlineTransfers) {
    t = &inline_transfers_[inline_used_++];
  } else {
    if (!more_transfers_) more_transfers_ = std::make_unique<std::deque<Transfer>>();
    t = &more_transfers_->emplace_back();
  }
  t->owner = this;
  return *t;
}

void Operation::send(Transfer& t, int peer, std::uint32_t step, const void* data, std::size_t bytes) {
  send_tagged(t, peer, collective_tag(group_.context, group_.rank, sequence_, step), data, bytes);
}

void Operation::recv(Transfer& t, int peer, std::uint32_t step, void* data, std::size_t bytes) {
  recv_tagged(t, peer, collective_tag(group_.context, peer, sequence_, step), data, bytes);
}

namespace {
// Where empty messages point: a tensor with no elements may have no data.
std::byte g_empty[1];
}  // namespace

void Operation::send_tagged(Transfer& t, int peer, Tag tag, const void* data, std::size_t bytes) {
  group_.messages->send(t, peer, tag, data != nullptr ? data : g_empty, bytes);
}

void Operation::recv_tagged(Transfer& t, int peer, Tag tag, void* data, std::size_t bytes) {
  group_.messages->recv(t, peer, tag, data != nullptr ? data : g_empty, bytes);
}

void Operation::transfer_failed(const Transfer& t) {
  if (first_failure_ == nullptr) first_failure_ = &t;
}

void Operation::start() {
  started_ = true;
  try {
    prepare();
    lanes_ = lane_count();
    slots_.resize(static_cast<std::size_t>(std::max(1, std::min(window(), lanes_))));
  } catch (const Error& e) {
    fail(e.status(), prefix() + ": " + e.what());
    return;
  } catch (const std::exception& e) {
    fail(DT_ERR_INTERNAL, prefix() + ": " + e.what());
    return;
  }
  advance();
}

bool Operation::advance() {
  if (!started_ || done_ || failed_) return false;
  bool moved = false;
  try {
    const int window = static_cast<int>(slots_.size());
    for (bool again = true; again;) {
      again = false;
      for (int s = 0; s < window; ++s) {
        Task& task = slots_[s];
        if (!task.empty() && !task.finished() && task.step()) moved = again = true;
        if (first_failure_ != nullptr) {
          fail_from(*first_failure_);
          return true;
        }
        // Lanes start in order, each in the slot its predecessor by `window` left.
        if ((task.empty() || task.finished()) && next_lane_ < lanes_ && next_lane_ % window == s) {
          task = lane(next_lane_, s);
          ++next_lane_;
          task.step();
          moved = again = true;
          if (first_failure_ != nullptr) {
            fail_from(*first_failure_);
            return true;
          }
        }
      }
    }
    if (next_lane_ == lanes_ &&
        std::all_of(slots_.begin(), slots_.end(), [](const Task& t) { return t.empty() || t.finished(); })) {
      slots_.clear();
      finish();
      done_ = true;
      request_->complete(DT_OK);
      moved = true;
    }
  } catch (const Error& e) {
    fail(e.status(), prefix() + ": " + e.what());
    moved = true;
  } catch (const std::exception& e) {
    fail(DT_ERR_INTERNAL, prefix() + ": " + e.what());
    moved = true;
  }
  return moved;
}

std::pair<dt_status, std::string> transfer_error(const Group& group, const Transfer& t) {
  const std::string who = describe_rank(group, t.peer);
  switch (t.status) {
    case MessageStatus::truncated:
      return {DT_ERR_MISMATCH, "the message from " + who + " does not have the " + std::to_string(t.bytes) +
                                   " bytes expected (do all ranks pass the same sizes, counts and roots?)"};
    case MessageStatus::out_of_memory:
      return {DT_ERR_OUT_OF_MEMORY, "the transport is out of memory"};
    default:
      return {DT_ERR_REMOTE, who + " " + group.messages->loss(t.peer, t.cause)};
  }
}

void Operation::fail_from(const Transfer& t) {
  const auto [status, why] = transfer_error(group_, t);
  fail(status, prefix() + ": " + why);
}

bool Operation::fail(dt_status status, const std::string& message) {
  if (failed_) return false;
  failed_ = true;
  slots_.clear();
  each_transfer(*this, [this](Transfer& t) { group_.messages->cancel(t); });
  return request_->complete(status, message);
}

bool Operation::quiescent() const {
  bool any = false;
  each_transfer(*this, [&any](const Transfer& t) { any = any || t.pending(); });
  return !any;
}

std::vector<int> Operation::waiting_on() const {
  std::vector<int> receiving;
  std::vector<int> sending;
  each_transfer(*this, [&](const Transfer& t) {
    if (t.pending()) (t.receive ? receiving : sending).push_back(t.peer);
  });
  std::sort(receiving.begin(), receiving.end());
  receiving.erase(std::unique(receiving.begin(), receiving.end()), receiving.end());
  std::sort(sending.begin(), sending.end());
  for (int peer : sending) {
    if (std::find(receiving.begin(), receiving.end(), peer) == receiving.end()) receiving.push_back(peer);
  }
  receiving.erase(std::unique(receiving.begin(), receiving.end()), receiving.end());
  return receiving;
}

bool Operation::involves(int peer) const {
  bool any = false;
  each_transfer(*this, [&any, peer](const Transfer& t) { any = any || (t.pending() && t.peer == peer); });
  return any;
}

std::vector<int> Operation::sending_to() const {
  std::vector<int> peers;
  each_transfer(*this, [&peers](const Transfer& t) {
    if (t.pending() && !t.receive) peers.push_back(t.peer);
  });
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

}  // namespace dtrain::comm::schedule
