// The Backend implementation behind make_ucx_backend(). Beyond the Backend
// interface it offers two things a communicator can use: waiting while
// driving progress on the calling thread, and naming the ranks an operation
// still waits for (for timeout messages).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/backend.hpp"
#include "comm/backends/ucx/engine.hpp"
#include "comm/backends/ucx/group.hpp"
#include "comm/backends/ucx/process_memory.hpp"

namespace dtrain::comm::ucx {

class UcxBackend final : public Backend {
 public:
  // `transport` is connected to every rank of the group; `world_ranks` maps
  // its ranks to world ranks, for messages; `identities` are their processes.
  UcxBackend(std::unique_ptr<Transport> transport, int rank, std::uint32_t context, std::vector<int> world_ranks,
             std::vector<ProcessIdentity> identities, const Tuning& tuning, int timeout_ms);

  const char* name() const override { return "ucx"; }

  RequestPtr start(const Collective& op) override;
  std::unique_ptr<Backend> split(int color, int key, int* new_rank, int* new_size) override;
  void abort() override;

  // Waits for `request` until `deadline`, first driving progress on this
  // thread; returns whether it completed.
  bool wait(const RequestPtr& request, Clock::time_point deadline) override;
  void expect_wait(bool on) override { engine_.expect_wait(on); }
  // The ranks `request` is still waiting for, as "rank 2, rank 5".
  std::string unresponsive_ranks(const Request& request) override;
  // Where every rank runs on this host and each may read the others' memory
  // (as for single copies: not with DTRAIN_UCX_SINGLE_COPY_BYTES=0).
  const PeerMemory* peer_memory() const override { return process_memory_.get(); }

  // Exchanges an empty message with every rank, then sets up shared memory
  // for allreduces where every rank runs on this host (share_memory.cpp).
  // Throws on failure, and DT_ERR_TIMEOUT naming the silent ranks once
  // `deadline` passes.
  void handshake(Clock::time_point deadline);

 private:
  void share_memory(Clock::time_point deadline);
  // The schedule of each kind: through the mailboxes where the ranks share
  // this host (and no DTRAIN_*_ALGO forces one over UCX), else over UCX.
  RequestPtr start_allreduce(const Collective& c);
  RequestPtr start_reduce_scatter(const Collective& c);
  RequestPtr start_allgather(const Collective& c);
  RequestPtr start_broadcast(const Collective& c);
  RequestPtr start_alltoallv(const Collective& c);
  RequestPtr start_reduce(const Collective& c);
  RequestPtr start_gather(const Collective& c);
  RequestPtr start_scatter(const Collective& c);
  RequestPtr start_allgatherv(const Collective& c);
  RequestPtr start_reduce_scatterv(const Collective& c);
  // Runs `collective` through the mailboxes, here and now if its caller
  // waits for it at once (engine_.run_now()), else scheduled.
  RequestPtr in_memory(const Collective& collective);
  // Every rank's `mine`, in rank order, through an internal allgather.
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> everyones(const T& mine, Clock::time_point deadline) {
    // Owned by the operation too: it may outlive a wait that timed out.
    auto in = std::make_shared<T>(mine);
    auto out = std::make_shared<std::vector<T>>(static_cast<std::size_t>(engine_.size()));
    auto op = schedule::bruck_allgather(bytes_view(in.get(), sizeof(T)), bytes_view(out->data(), out->size() * sizeof(T)));
    op->keep_alive(in);
    op->keep_alive(out);
    run(std::move(op), deadline);
    return *out;
  }

  // Runs an internal operation to completion; throws its error, or
  // DT_ERR_TIMEOUT (breaking the backend) at the deadline.
  void run(std::unique_ptr<Operation> op, Clock::time_point deadline);

  const std::uint32_t context_;
  const std::vector<int> world_ranks_;
  const std::vector<ProcessIdentity> identities_;
  const int timeout_ms_;
  const NetScope scope_;  // the transport's, for those of splits
  Engine engine_;
  // Where every rank may read and write the others' memory; after the engine,
  // whose group it copies for.
  std::unique_ptr<ProcessMemory> process_memory_;
  int splits_ = 0;
};

}  // namespace dtrain::comm::ucx
