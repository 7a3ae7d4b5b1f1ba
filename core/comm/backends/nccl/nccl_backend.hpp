// The NCCL backend: CUDA tensors moved by an NCCL communicator, one rank per
// GPU. Each operation is queued on the caller's stream (the views' `stream`,
// the C API's argument) or, when that is NULL, on the backend's own stream
// (stream-ordered, as in NCCL), and a CUDA event is recorded after it on
// the same stream; the request completes when its event has, or with
// NCCL's error.
//
// The NCCL communicator is nonblocking (ncclConfig_t.blocking = 0), so no
// NCCL call blocks the caller: while NCCL reports ncclInProgress the backend
// polls ncclCommGetAsyncError, checking its deadline and abort. A watcher
// thread polls the events and the communicator's asynchronous error while
// operations are pending, so requests complete without anyone waiting on
// them (dt_request_test). abort() completes pending requests with
// DT_ERR_ABORTED and has the watcher call ncclCommAbort, which stops NCCL's
// kernels; it never blocks the caller.
//
// What NCCL does not do that the UCX backend does: tags do not select
// messages (point-to-point messages between two ranks match in order), a
// send holds up the stream until its receive is posted (NCCL's rule), and
// ranks that disagree about sizes are not detected (the deadline turns the
// hang that follows into DT_ERR_TIMEOUT). Messages to oneself are matched by
// the backend itself (in order) and copied on the stream.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/backends/per_kind.hpp"
#include "comm/backends/nccl/nccl_api.hpp"
#include "comm/exchange_plan.hpp"
#include "device/cuda/runtime.hpp"

namespace dtrain::comm::nccl {

class NcclBackend final : public PerKindBackend<NcclBackend> {
 public:
  // Creates rank `rank` of a `size`-rank NCCL communicator on `device`.
  // Collective: rank 0 makes the unique id and `share_id` must deliver rank
  // 0's id to every rank (through a host backend's broadcast or a
  // rendezvous). Throws NCCL's error with its text, DT_ERR_TIMEOUT when the
  // communicator is not ready within timeout_ms, or DT_ERR_ABORTED as soon
  // as `cancel` (when given) turns true.
  static std::unique_ptr<NcclBackend> create(const Api& api, int rank, int size, int device, int timeout_ms,
                                             const std::function<void(ncclUniqueId&)>& share_id,
                                             const std::atomic<bool>* cancel = nullptr);

  // Takes over `comm` (ready, nonblocking) as rank `rank` of `size`.
  NcclBackend(const Api& api, ncclComm_t comm, int rank, int size, int device, int timeout_ms);
  ~NcclBackend() override;

  const char* name() const override { return "nccl"; }
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_.get(); }

  // ncclCommSplit (collective over this communicator; DT_UNDEF takes part
  // as NCCL_SPLIT_NOCOLOR and gets nullptr).
  std::unique_ptr<Backend> split(int color, int key, int* new_rank, int* new_size) override;
  void abort() override;

  // Waits for `request`, polling NCCL and the events on this thread too.
  bool wait(const RequestPtr& request, Clock::time_point deadline) override;

 private:
  // The operations start() runs, by kind.
  friend class PerKindBackend<NcclBackend>;
  RequestPtr start_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op);
  RequestPtr start_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op);
  RequestPtr start_allgather(const TensorView& send, const TensorView& recv);
  RequestPtr start_broadcast(const TensorView& buf, int root);
  RequestPtr start_alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                             const TensorView& recv, const std::vector<std::int64_t>& recv_counts);
  RequestPtr start_send(const TensorView& buf, int peer, int tag);
  RequestPtr start_recv(const TensorView& buf, int peer, int tag);
  // NCCL has no barrier; the router runs barriers on the host backend.
  RequestPtr start_barrier();
  // ncclReduce; reduce_scatterv as a group of ncclReduce calls, one per
  // rank's block; gather, scatter and allgatherv as a group of ncclSend and
  // ncclRecv following their ExchangePlan.
  RequestPtr start_reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root);
  RequestPtr start_gather(const TensorView& send, const TensorView& recv, int root);
  RequestPtr start_scatter(const TensorView& send, const TensorView& recv, int root);
  RequestPtr start_allgatherv(const TensorView& send, const TensorView& recv,
                              const std::vector<std::int64_t>& recv_counts);
  RequestPtr start_reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                                   const TensorView& recv, ReduceOp op);
  // One NCCL group of ncclSend and ncclRecv (messages to oneself included,
  // which a group matches); tags select nothing, as for send and recv.
  RequestPtr start_p2p_group(const std::vector<P2pOp>& ops);

  struct Pending {
    RequestPtr request;
    std::unique_ptr<device::cuda::Event> event;
    RequestPtr partner;  // a message to oneself completes its send and its receive together
  };
  // Messages to oneself do not go through NCCL, where a lone send to oneself
  // would wait on the stream for a receive queued behind it: sends and
  // receives are matched here, in order, and copied on the stream.
  struct SelfMessage {
    TensorView buf;
    RequestPtr request;
  };
  // What an operation queues: NCCL calls, each passed through `step` (which
  // settles it and remembers the first that failed), and CUDA work on the
  // stream around them. Returns the first failure or ncclSuccess.
  using Step = std::function<ncclResult_t(const char* call, ncclResult_t result)>;
  using Enqueue = std::function<ncclResult_t(const Step& step)>;

  // Runs `calls` between ncclGroupStart and ncclGroupEnd, closing the group
  // also after a call inside it failed. `calls` returns its first failure
  // and names the failing call in `*call`. Returns the first failure.
  ncclResult_t grouped(const Step& step, const std::function<ncclResult_t(const char** call)>& calls);
  // Queues `plan`'s own copy, then its messages as one group, on `stream`.
  RequestPtr exchange(const char* op, cudaStream_t stream, const ExchangePlan& plan);
  // Queues `enqueue`'s work on `stream` and records the request's event there.
  RequestPtr launch(const char* op, cudaStream_t stream, const Enqueue& enqueue);
  // The stream an operation on `view` runs on: the caller's, or ours.
  cudaStream_t stream_of(const TensorView& view) const {
    return view.stream != nullptr ? static_cast<cudaStream_t>(view.stream) : stream_.get();
  }
  // Queues the copy of a matched message to oneself (or fails both on a
  // size mismatch).
  void deliver_to_self(const SelfMessage& send, const SelfMessage& recv);
  // A send (is_send) or receive to oneself: matched here, never through NCCL.
  RequestPtr to_self(const char* op, const TensorView& buf, bool is_send);
  // Waits out ncclInProgress on `comm` (polling ncclCommGetAsyncError) until
  // the deadline or an abort; returns the final result.
  ncclResult_t settle(ncclComm_t comm, ncclResult_t result, Clock::time_point deadline);
  std::string describe(const char* call, ncclResult_t result, ncclComm_t comm) const;
  // Completes whatever finished; fails everything on an asynchronous error.
  void poll();
  // Records the first failure and completes every pending request with it.
  void fail_all(dt_status status, const std::string& message);
  void watch();
  std::unique_ptr<device::cuda::Event> take_event();
  std::string prefix() const { return "rank " + std::to_string(rank_) + ": "; }

  const Api& api_;
  const int rank_;
  const int size_;
  const int device_;
  const int timeout_ms_;
  device::cuda::Stream stream_;
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<bool> aborted_{false};

  std::mutex comm_mutex_;  // one NCCL call at a time on comm_; held by ncclCommAbort
  ncclComm_t comm_ = nullptr;

  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::deque<Pending> pending_;  // in issue order
  std::deque<SelfMessage> self_sends_;  // not yet received
  std::deque<SelfMessage> self_recvs_;  // not yet sent
  std::vector<std::unique_ptr<device::cuda::Event>> spare_events_;
  dt_status failed_ = DT_OK;  // first asynchronous failure, which every later operation reports
  std::string failure_;
  bool abort_requested_ = false;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace dtrain::comm::nccl
