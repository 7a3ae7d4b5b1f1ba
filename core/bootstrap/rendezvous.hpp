// How ranks exchange what they need at start-up (transport addresses, NCCL
// unique ids) before any transport exists. Implemented over the rendezvous
// store, over a caller's out-of-band allgather (e.g. MPI), or in memory for
// tests.
#pragma once

#include <string>
#include <vector>

namespace dtrain::bootstrap {

class Rendezvous {
 public:
  virtual ~Rendezvous() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Every rank contributes `local` (any length, may differ between ranks);
  // returns all contributions in rank order. `key` names this exchange and
  // must be the same on every rank and unique within the job. Throws
  // DT_ERR_TIMEOUT naming the ranks not heard from when the deadline passes.
  virtual std::vector<std::string> allgather(const std::string& key, const std::string& local) = 0;
};

}  // namespace dtrain::bootstrap
