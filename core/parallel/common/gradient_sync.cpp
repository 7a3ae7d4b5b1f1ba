#include "parallel/common/gradient_sync.hpp"

#include <utility>

#include "base/error.hpp"
#include "base/index_list.hpp"
#include "comm/deadline.hpp"

namespace dtrain::parallel::common {

GradientSync::GradientSync(comm::Communicator& comm, const std::vector<std::size_t>& group_of,
                           std::vector<std::size_t> launch_order, Launch launch, std::string step)
    : comm_(comm),
      launch_(std::move(launch)),
      step_(std::move(step)),
      group_of_(group_of),
      launch_order_(std::move(launch_order)),
      members_(launch_order_.size(), 0),
      marked_(group_of_.size(), false),
      marked_in_(launch_order_.size(), 0),
      requests_(launch_order_.size()),
      launched_(launch_order_.size(), false) {
  for (std::size_t group : group_of_) ++members_.at(group);
}

void GradientSync::check_unmarked(std::size_t gradient, const char* is_or_was) const {
  if (marked_[gradient]) {
    raise(DT_ERR_INVALID_USAGE, "gradient " + std::to_string(gradient) + " " + is_or_was +
                                    " already marked ready in this " + step_ + "; wait() ends the " + step_);
  }
}

bool GradientSync::mark(std::size_t gradient) {
  check_unmarked(gradient, "was");
  marked_[gradient] = true;
  ++marked_count_;
  const std::size_t group = group_of_[gradient];
  ++marked_in_[group];
  if (!complete(group)) return false;
  launch_ready();
  return true;
}

std::vector<std::size_t> GradientSync::unmarked() const {
  std::vector<std::size_t> unmarked;
  for (std::size_t i = 0; i < marked_.size(); ++i) {
    if (!marked_[i]) unmarked.push_back(i);
  }
  return unmarked;
}

std::string GradientSync::unmarked_message(const std::vector<std::size_t>& unmarked) const {
  const bool one = unmarked.size() == 1;
  return "rank " + std::to_string(comm_.rank()) + ": gradient" + (one ? " " : "s ") + list_indices(unmarked) +
         (one ? " was" : " were") + " never marked ready in this " + step_;
}

void GradientSync::launch_ready() {
  if (!launching_) return;
  while (launched_count_ < launch_order_.size() && complete(launch_order_[launched_count_])) {
    const std::size_t group = launch_order_[launched_count_];
    requests_[group] = launch_(group);
    launched_[group] = true;
    ++launched_count_;
  }
}

GroupState GradientSync::state(std::size_t group) const {
  if (!launched_[group]) return GroupState::waiting;
  const comm::RequestPtr& request = requests_[group];
  if (!request) return GroupState::reduced;
  if (!request->done()) return GroupState::in_flight;
  return request->status() == DT_OK ? GroupState::reduced : GroupState::failed;
}

void GradientSync::take_finished(const std::function<void(std::size_t)>& finish) {
  while (finished_count_ < launched_count_) {
    const std::size_t group = launch_order_[finished_count_];
    if (state(group) != GroupState::reduced) return;
    ++finished_count_;
    finish(group);
  }
}

void GradientSync::finish_all(comm::Clock::time_point deadline, const std::function<void(std::size_t)>& finish) {
  while (finished_count_ < launched_count_) {
    const std::size_t group = launch_order_[finished_count_];
    if (requests_[group]) comm::wait_until(comm_, requests_[group], deadline);
    ++finished_count_;
    finish(group);
  }
}

void GradientSync::abandon(comm::Clock::time_point deadline) noexcept {
  for (const comm::RequestPtr& request : requests_) {
    if (!request) continue;
    try {
      comm::wait_until(comm_, request, deadline);
    } catch (...) {
      // Reported, if at all, by the caller's own error.
    }
  }
  reset();
}

void GradientSync::reset() {
  marked_.assign(marked_.size(), false);
  marked_count_ = 0;
  marked_in_.assign(marked_in_.size(), 0);
  for (comm::RequestPtr& request : requests_) request.reset();
  launched_.assign(launched_.size(), false);
  launched_count_ = 0;
  finished_count_ = 0;
}

}  // namespace dtrain::parallel::common
