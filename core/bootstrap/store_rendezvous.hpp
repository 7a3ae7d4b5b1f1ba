// Rendezvous through the rendezvous store (store/store_server.hpp).
//
// Who hosts: an external store (dtrun, or whatever DTRAIN_STORE points at),
// or, when the job has none, rank 0, which starts a StoreServer on the
// store's port before connecting to it like every other rank. open() does
// both; ranks other than 0 retry connecting until rank 0 is listening.
// Rank 0 binds as StoreServer does: 127.0.0.1 unless DTRAIN_STORE_BIND
// names an address, so a job across hosts sets DTRAIN_STORE_BIND on rank 0
// to the address the others reach it at.
//
// Keys, under `prefix` (default "dtrain/rdzv/"), for allgather(key, ...):
//   <prefix><key>/<rank>    rank's contribution
//   <prefix><key>/done      counter of ranks that have read every contribution;
//                           the rank that brings it to `size` removes the
//                           contributions and the counter
//   <prefix><key>/complete  set by that rank when rank 0 hosts the store and
//                           removed by rank 0, which waits for it so that it
//                           never shuts the store down under a rank still reading
// A store shared by several groups (dt_comm_split) needs one prefix per group.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/host_port.hpp"
#include "bootstrap/rendezvous.hpp"
#include "bootstrap/store/limits.hpp"
#include "bootstrap/store/store_client.hpp"
#include "bootstrap/store/store_server.hpp"

namespace dtrain::bootstrap {

class StoreRendezvous : public Rendezvous {
 public:
  struct Options {
    int rank = 0;
    int size = 1;
    HostPort store;                     // where the store is, or where rank 0 starts it
    std::string token;                  // the job's auth token
    std::chrono::milliseconds timeout{300000};  // connecting, and each allgather
    bool rank0_hosts = false;           // true: no external store; rank 0 runs it
    StoreLimits limits;                 // for the store rank 0 runs
    std::string prefix = "dtrain/rdzv/";
  };

  // Starts the store on rank 0 when `rank0_hosts`, then connects. Every rank
  // must pass the same `rank0_hosts`, `store` and `prefix`.
  static std::unique_ptr<StoreRendezvous> open(const Options& options);

  // Over an existing client; `timeout` bounds each allgather.
  StoreRendezvous(std::shared_ptr<StoreClient> client, int rank, int size, std::chrono::milliseconds timeout,
                  std::string prefix = "dtrain/rdzv/");
  ~StoreRendezvous() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // DT_ERR_TIMEOUT names the ranks whose contribution did not arrive in time.
  std::vector<std::string> allgather(const std::string& key, const std::string& local) override;

  StoreClient& client() { return *client_; }
  // The store this rank runs, or nullptr.
  const StoreServer* server() const { return server_.get(); }

 private:
  std::unique_ptr<StoreServer> server_;  // declared first: destroyed after the client
  std::shared_ptr<StoreClient> client_;
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::string prefix_;
  bool rank0_hosts_ = false;
};

}  // namespace dtrain::bootstrap
