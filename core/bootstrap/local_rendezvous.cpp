#include "bootstrap/local_rendezvous.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bootstrap/rank_list.hpp"

namespace dtrain::bootstrap {

struct LocalRendezvousGroup::State {
  struct Exchange {
    std::vector<std::optional<std::string>> parts;
    int contributed = 0;
    int collected = 0;
  };

  int size = 0;
  std::chrono::milliseconds timeout{0};
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, Exchange> exchanges;
};

namespace {

class LocalRendezvous : public Rendezvous {
 public:
  using State = LocalRendezvousGroup::State;
  LocalRendezvous(std::shared_ptr<State> state, int rank) : state_(std::move(state)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return state_->size; }

  std::vector<std::string> allgather(const std::string& key, const std::string& local) override {
    State& s = *state_;
    const auto deadline = std::chrono::steady_clock::now() + s.timeout;
    std::unique_lock<std::mutex> lock(s.mutex);
    // Entries of std::map stay where they are while others are added.
    State::Exchange& ex = s.exchanges[key];
    if (ex.parts.empty()) ex.parts.resize(static_cast<std::size_t>(s.size));
    auto& mine = ex.parts[static_cast<std::size_t>(rank_)];
    if (mine) {
      raise(DT_ERR_INVALID_USAGE,
            "rank " + std::to_string(rank_) + " contributed twice to local rendezvous '" + key + "'");
    }
    mine = local;
    ++ex.contributed;
    s.changed.notify_all();
    if (!s.changed.wait_until(lock, deadline, [&] { return ex.contributed == s.size; })) {
      std::vector<int> missing;
      for (int r = 0; r < s.size; ++r) {
        if (!ex.parts[static_cast<std::size_t>(r)]) missing.push_back(r);
      }
      raise(DT_ERR_TIMEOUT, "local rendezvous '" + key + "' timed out after " + std::to_string(s.timeout.count()) +
                                " ms waiting for " + describe_ranks(missing, s.size));
    }
    std::vector<std::string> all;
    all.reserve(ex.parts.size());
    for (const auto& part : ex.parts) all.push_back(*part);
    if (++ex.collected == s.size) s.exchanges.erase(key);
    return all;
  }

 private:
  std::shared_ptr<State> state_;
  int rank_;
};

}  // namespace

LocalRendezvousGroup::LocalRendezvousGroup(int size, std::chrono::milliseconds timeout)
    : state_(std::make_shared<State>()) {
  if (size < 1) raise(DT_ERR_INVALID_ARGUMENT, "a local rendezvous group needs at least one rank");
  if (timeout.count() <= 0) raise(DT_ERR_INVALID_ARGUMENT, "a local rendezvous group needs a positive timeout");
  state_->size = size;
  state_->timeout = timeout;
}

LocalRendezvousGroup::~LocalRendezvousGroup() = default;

int LocalRendezvousGroup::size() const { return state_->size; }

std::unique_ptr<Rendezvous> LocalRendezvousGroup::member(int rank) const {
  if (rank < 0 || rank >= state_->size) {
    raise(DT_ERR_INVALID_ARGUMENT, "rank " + std::to_string(rank) + " is not in a local rendezvous group of " +
                                       std::to_string(state_->size));
  }
  return std::make_unique<LocalRendezvous>(state_, rank);
}

}  // namespace dtrain::bootstrap
