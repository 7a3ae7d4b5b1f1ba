// Rendezvous over an allgather the caller supplies (dt_comm_options.
// oob_allgather), e.g. an MPI_Allgather over the caller's communicator.
//
// That allgather moves the same number of bytes from every rank, so one
// exchange takes two calls: first each rank's length (with a hash of the
// exchange's key, so that ranks in different exchanges are caught), then the
// contributions padded to the longest. Deadlines are the callback's business:
// it runs under whatever timeout the caller's runtime has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/rendezvous.hpp"
#include "dtrain/comm.h"

namespace dtrain::bootstrap {

class OobRendezvous : public Rendezvous {
 public:
  // `rank` of `size` in the caller's group; `fn(user, ...)` must be
  // collective over exactly those ranks. DT_ERR_INVALID_ARGUMENT for a NULL
  // callback or an inconsistent rank and size.
  OobRendezvous(int rank, int size, dt_oob_allgather_fn fn, void* user);

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // A callback that returns an error status fails the exchange with that
  // status (DT_ERR_REMOTE for a status that is not an error), naming the
  // step. Ranks that name different keys get DT_ERR_MISMATCH.
  std::vector<std::string> allgather(const std::string& key, const std::string& local) override;

 private:
  void call(const std::string& key, const char* step, const void* send, void* recv, std::size_t bytes);

  int rank_;
  int size_;
  dt_oob_allgather_fn fn_;
  void* user_;
};

}  // namespace dtrain::bootstrap
