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
#include "comm/backends/ucx/algorithms.hpp"
#include "comm/backends/ucx/engine.hpp"

namespace dtrain::comm::ucx {

class UcxBackend final : public Backend {
 public:
  // `transport` is connected to every rank of the group; `world_ranks` maps
  // its ranks to world ranks, for messages; `identities` are their processes.
  UcxBackend(std::unique_ptr<Transport> transport, int rank, std::uint32_t context, std::vector<int> world_ranks,
             std::vector<ProcessIdentity> identities, const Tuning& tuning, int timeout_ms);

  const char* name() const override { return "ucx"; }

  RequestPtr allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) override;
  RequestPtr reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) override;
  RequestPtr allgather(const TensorView& send, const TensorView& recv) override;
  RequestPtr broadcast(const TensorView& buf, int root) override;
  RequestPtr alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                       const TensorView& recv, const std::vector<std::int64_t>& recv_counts) override;
  RequestPtr send(const TensorView& buf, int peer, int tag) override;
  RequestPtr recv(const TensorView& buf, int peer, int tag) override;
  RequestPtr barrier() override;
  RequestPtr reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root) override;
  RequestPtr gather(const TensorView& send, const TensorView& recv, int root) override;
  RequestPtr scatter(const TensorView& send, const TensorView& recv, int root) override;
  RequestPtr allgatherv(const TensorView& send, const TensorView& recv,
                        const std::vector<std::int64_t>& recv_counts) override;
  RequestPtr reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                             const TensorView& recv, ReduceOp op) override;
  RequestPtr p2p_group(const std::vector<P2pOp>& ops) override;
  std::unique_ptr<Backend> split(int color, int key, int* new_rank, int* new_size) override;
  void abort() override;

  // Waits for `request` until `deadline`, first driving progress on this
  // thread; returns whether it completed.
  bool wait(const RequestPtr& request, Clock::time_point deadline) override;
  void expect_wait(bool on) override { engine_.expect_wait(on); }
  // The ranks `request` is still waiting for, as "rank 2, rank 5".
  std::string unresponsive_ranks(const Request& request) override;

  // Exchanges an empty message with every rank, then sets up shared memory
  // for allreduces where every rank runs on this host (share_memory.cpp).
  // Throws on failure, and DT_ERR_TIMEOUT naming the silent ranks once
  // `deadline` passes.
  void handshake(Clock::time_point deadline);

 private:
  void share_memory(Clock::time_point deadline);
  // Runs `collective` through the mailboxes, here and now if its caller
  // waits for it at once (engine_.run_now()), else scheduled.
  RequestPtr in_memory(Collective collective);
  // Every rank's `mine`, in rank order, through an internal allgather.
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> gather(const T& mine, Clock::time_point deadline) {
    // Owned by the operation too: it may outlive a wait that timed out.
    auto in = std::make_shared<T>(mine);
    auto out = std::make_shared<std::vector<T>>(static_cast<std::size_t>(engine_.size()));
    auto op = bruck_allgather(bytes_view(in.get(), sizeof(T)), bytes_view(out->data(), out->size() * sizeof(T)));
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
  int splits_ = 0;
};

}  // namespace dtrain::comm::ucx
