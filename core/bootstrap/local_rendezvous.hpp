// Rendezvous between threads of one process, for tests of the modules that
// use a Rendezvous (transports, communicators) without a store or MPI.
//
//   LocalRendezvousGroup group(4);
//   std::vector<std::thread> threads;
//   for (int r = 0; r < 4; ++r)
//     threads.emplace_back([&, r] { auto rdzv = group.member(r); ... rdzv->allgather("addr", mine); });
#pragma once

#include <chrono>
#include <memory>

#include "bootstrap/rendezvous.hpp"

namespace dtrain::bootstrap {

class LocalRendezvousGroup {
 public:
  // `size` ranks; an allgather that has not heard from every rank within
  // `timeout` throws DT_ERR_TIMEOUT naming the missing ranks.
  explicit LocalRendezvousGroup(int size, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~LocalRendezvousGroup();

  int size() const;

  // The Rendezvous of `rank`, for one thread to use. It shares the group's
  // state, so it may outlive the group. DT_ERR_INVALID_ARGUMENT for a rank
  // outside 0..size-1.
  std::unique_ptr<Rendezvous> member(int rank) const;

  // What the group and its members share; defined in the .cpp.
  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace dtrain::bootstrap
