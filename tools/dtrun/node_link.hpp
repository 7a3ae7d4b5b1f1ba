// The dtruns of a job that spans nodes tell each other of a failure through
// the job's store: the first to see one of its ranks fail sets the key
// "dtrun/failure"; each dtrun waits for that key on a thread of its own and,
// when another node set it, wakes its supervisor (wake_fd()) to stop its
// ranks. So a rank that dies on one node ends the job on every node at once,
// instead of leaving the others to time out.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "bootstrap/store/store_client.hpp"
#include "supervisor.hpp"

namespace dtrun {

class NodeLink {
 public:
  // Starts watching the store at host:port (connecting in the background:
  // node 0's dtrun may start later).
  NodeLink(std::string host, int port, std::string token, int node_rank);
  ~NodeLink();  // stops watching

  NodeLink(const NodeLink&) = delete;
  NodeLink& operator=(const NodeLink&) = delete;

  // Tells the other nodes that a rank here failed, unless one of them told
  // first. Failing to reach the store is reported, not thrown.
  void post(int exit_code, const std::string& what);
  // What another node posted, once the watcher has woken the supervisor.
  std::optional<RemoteFailure> failure();
  // Says that this node's ranks have all ended.
  void finished();
  // Waits, at most `timeout`, until every node has said finished(); says
  // which did not.
  void wait_for_nodes(int nnodes, std::chrono::milliseconds timeout);

 private:
  void watch();
  std::unique_ptr<dtrain::bootstrap::StoreClient> connect(std::chrono::milliseconds timeout);

  const std::string host_;
  const int port_;
  const std::string token_;
  const int node_rank_;
  std::mutex mutex_;
  std::unique_ptr<dtrain::bootstrap::StoreClient> watcher_;  // guarded by mutex_ (for abort)
  std::optional<RemoteFailure> failure_;                     // guarded by mutex_
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace dtrun
