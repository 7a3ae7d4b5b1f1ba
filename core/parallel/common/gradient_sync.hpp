// What DDP and ZeRO share in reducing a step's gradients over the ranks:
// which gradients are final, when each group's collective starts, waiting
// for them all by one deadline, and abandoning a step that fails.
//
// Gradients are numbered 0..n-1 and fall into groups (DDP's buckets,
// ZeRO's units). A group's collective is launched once every gradient in it
// is marked and every group before it in the launch order has been
// launched, so that every rank issues the same collectives in the same
// order whatever order backward marks them in. What a collective is, and
// what happens to a group's buffer before and after it (copies, scaling,
// the device's ordering), is the strategy's: it launches through the
// `launch` callback given at creation and finishes each group through the
// callbacks of take_finished() and finish_all(), which see the groups in
// launch order.
//
// One step: mark() gradients (each once), then launch_ready() and
// finish_all() in wait(), then reset(); or abandon() when the step fails.
// With launching off (accumulating gradients locally, PyTorch's no_sync),
// marks are recorded and nothing starts.
//
// Not thread-safe: the strategy serialises its calls.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace dtrain::parallel::common {

// The values are the C API's dt_bucket_state.
enum class GroupState {
  waiting = 0,    // not launched in this step
  in_flight = 1,  // its collective is running
  reduced = 2,    // its collective is done; the strategy has not finished it
  failed = 3,     // its collective failed; finish_all() reports why
};

class GradientSync {
 public:
  // Starts a group's collective (every gradient in it is marked); null
  // when the group has nothing to send.
  using Launch = std::function<comm::RequestPtr(std::size_t group)>;

  // `group_of[i]` is gradient i's group; `launch_order` lists every group
  // once, in the order their collectives are issued. `step` names a step in
  // messages ("step", "micro-step"). `comm` must outlive it.
  GradientSync(comm::Communicator& comm, const std::vector<std::size_t>& group_of,
               std::vector<std::size_t> launch_order, Launch launch, std::string step);

  std::size_t gradient_count() const { return group_of_.size(); }
  std::size_t group_count() const { return members_.size(); }
  std::size_t group_of(std::size_t gradient) const { return group_of_[gradient]; }

  // DT_ERR_INVALID_USAGE when `gradient` (in range) is marked in this step;
  // the message says it `is_or_was` marked.
  void check_unmarked(std::size_t gradient, const char* is_or_was) const;
  // Marks `gradient` (checked as above) and, with launching on, launches
  // every group that is now ready. Returns whether its group is complete.
  bool mark(std::size_t gradient);
  std::size_t marked_count() const { return marked_count_; }
  // Gradients not marked in this step, in order.
  std::vector<std::size_t> unmarked() const;
  // "rank 1: gradients 2, 5 were never marked ready in this step".
  std::string unmarked_message(const std::vector<std::size_t>& unmarked) const;

  // Whether complete groups start their collectives (on at creation).
  void set_launching(bool launching) { launching_ = launching; }
  // Launches, in launch order, every complete group next in line.
  void launch_ready();
  GroupState state(std::size_t group) const;

  // Calls `finish(group)`, in launch order, for each launched group not
  // finished yet whose collective has succeeded, up to the first that has
  // not: without waiting.
  void take_finished(const std::function<void(std::size_t)>& finish);
  // The same for every launched group, waiting for each (until `deadline`);
  // throws the first collective's error (DT_ERR_TIMEOUT after the deadline).
  void finish_all(comm::Clock::time_point deadline, const std::function<void(std::size_t)>& finish);

  // Waits for every launched collective, however it ends (until
  // `deadline`), so that their buffers are free, then resets.
  void abandon(comm::Clock::time_point deadline) noexcept;
  // Ready for the next step: nothing marked, nothing launched.
  void reset();

 private:
  bool complete(std::size_t group) const { return marked_in_[group] == members_[group]; }

  comm::Communicator& comm_;
  const Launch launch_;
  const std::string step_;
  const std::vector<std::size_t> group_of_;
  const std::vector<std::size_t> launch_order_;
  std::vector<std::size_t> members_;  // gradients per group

  bool launching_ = true;
  std::vector<bool> marked_;
  std::size_t marked_count_ = 0;
  std::vector<std::size_t> marked_in_;         // per group
  std::vector<comm::RequestPtr> requests_;     // per group, once launched (null: nothing to send)
  std::vector<bool> launched_;                 // per group
  std::size_t launched_count_ = 0;             // launch_order_[0, launched_count_) are launched
  std::size_t finished_count_ = 0;             // launch_order_[0, finished_count_) are finished
};

}  // namespace dtrain::parallel::common
