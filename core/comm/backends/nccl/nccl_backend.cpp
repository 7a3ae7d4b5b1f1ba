#include "comm/backends/nccl/nccl_backend.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <thread>
#include <utility>

#include "base/error.hpp"
#include "base/log.hpp"
#include "comm/backends/nccl/mapping.hpp"
#include "device/cuda/error.hpp"

namespace dtrain::comm::nccl {

namespace {

using device::cuda::DeviceGuard;

// Spin briefly (operations of a few microseconds), then sleep in short steps.
void back_off(int& round) {
  if (++round < 64) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(round < 1024 ? 10 : 200));
  }
}

ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

std::byte* bytes_at(void* base, std::size_t offset) { return static_cast<std::byte*>(base) + offset; }

// Polls a communicator that NCCL is still setting up (init or split) until
// it is ready, fails, the deadline passes or `cancel` turns true (the last
// two return ncclInProgress).
ncclResult_t settle_setup(const Api& api, ncclComm_t comm, ncclResult_t result, Clock::time_point deadline,
                          const std::atomic<bool>* cancel = nullptr) {
  int round = 0;
  while (result == ncclInProgress) {
    ncclResult_t state = ncclInProgress;
    const ncclResult_t query = api.comm_get_async_error(comm, &state);
    if (query != ncclSuccess) return query;
    result = state;
    if (result != ncclInProgress) break;
    if (Clock::now() >= deadline || (cancel != nullptr && cancel->load())) return ncclInProgress;
    back_off(round);
  }
  return result;
}

}  // namespace

std::unique_ptr<NcclBackend> NcclBackend::create(const Api& api, int rank, int size, int device, int timeout_ms,
                                                 const std::function<void(ncclUniqueId&)>& share_id,
                                                 const std::atomic<bool>* cancel) {
  const std::string who = "rank " + std::to_string(rank) + ": ";
  ncclUniqueId id{};
  if (rank == 0) {
    const ncclResult_t rc = api.get_unique_id(&id);
    if (rc != ncclSuccess) {
      raise(status_of(rc), who + nccl::describe("ncclGetUniqueId", rc, api.get_error_string(rc),
                                                 api.get_last_error(nullptr)));
    }
  }
  if (size > 1) share_id(id);

  DeviceGuard guard(device);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  ncclConfig_t config = nonblocking_config();
  ncclComm_t comm = nullptr;
  ncclResult_t rc = api.comm_init_rank_config(&comm, size, id, rank, &config);
  if (comm != nullptr) rc = settle_setup(api, comm, rc, deadline, cancel);
  if (rc != ncclSuccess && cancel != nullptr && cancel->load()) {
    if (comm != nullptr) api.comm_abort(comm);
    raise(DT_ERR_ABORTED, who + "aborted while the NCCL communicator was being created");
  }
  if (rc != ncclSuccess) {
    const std::string text =
        rc == ncclInProgress
            ? "the NCCL communicator of " + std::to_string(size) + " ranks was not ready within " +
                  std::to_string(timeout_ms) + " ms (do all ranks reach their first CUDA operation?)"
            : nccl::describe("ncclCommInitRankConfig", rc, api.get_error_string(rc), api.get_last_error(comm));
    if (comm != nullptr) api.comm_abort(comm);
    raise(rc == ncclInProgress ? DT_ERR_TIMEOUT : status_of(rc), who + text);
  }
  try {
    return std::make_unique<NcclBackend>(api, comm, rank, size, device, timeout_ms);
  } catch (...) {
    api.comm_abort(comm);  // the backend never took it over (its stream could not be made)
    throw;
  }
}

NcclBackend::NcclBackend(const Api& api, ncclComm_t comm, int rank, int size, int device, int timeout_ms)
    : api_(api), rank_(rank), size_(size), device_(device), timeout_ms_(timeout_ms), stream_(device), comm_(comm) {
  watcher_ = std::thread([this] { watch(); });
  DT_LOG(debug) << "NCCL communicator ready: rank " << rank << " of " << size << " on CUDA device " << device;
}

NcclBackend::~NcclBackend() {
  abort();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  watcher_.join();
}

std::string NcclBackend::describe(const char* call, ncclResult_t result, ncclComm_t comm) const {
  return nccl::describe(call, result, api_.get_error_string(result), api_.get_last_error(comm));
}

std::unique_ptr<device::cuda::Event> NcclBackend::take_event() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_events_.empty()) {
      auto event = std::move(spare_events_.back());
      spare_events_.pop_back();
      return event;
    }
  }
  return std::make_unique<device::cuda::Event>(device_);
}

ncclResult_t NcclBackend::settle(ncclComm_t comm, ncclResult_t result, Clock::time_point deadline) {
  int round = 0;
  while (result == ncclInProgress) {
    ncclResult_t state = ncclInProgress;
    const ncclResult_t query = api_.comm_get_async_error(comm, &state);
    if (query != ncclSuccess) return query;
    result = state;
    if (result != ncclInProgress) break;
    if (aborted_.load(std::memory_order_acquire) || Clock::now() >= deadline) return ncclInProgress;
    back_off(round);
  }
  return result;
}

RequestPtr NcclBackend::launch(const char* op, cudaStream_t stream, const Enqueue& enqueue) {
  auto request = std::make_shared<Request>(std::string(op) + " #" + std::to_string(++sequence_));
  const auto refuse = [&]() -> bool {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ == DT_OK && !aborted_.load()) return false;
    const dt_status status = failed_ == DT_OK ? DT_ERR_ABORTED : failed_;
    const std::string why = failed_ == DT_OK ? "aborted" : failure_;
    request->complete(status, prefix() + request->what() + ": " + why);
    return true;
  };
  if (refuse()) return request;
  try {
    DeviceGuard guard(device_);
    auto event = take_event();
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
    {
      std::lock_guard<std::mutex> lock(comm_mutex_);
      if (comm_ == nullptr) {
        refuse();
        return request;
      }
      const char* failed_call = nullptr;
      // Each NCCL call is settled before the next (NCCL's rule for
      // nonblocking communicators); the first failure stops the sequence.
      const auto step = [&](const char* call, ncclResult_t result) {
        result = settle(comm_, result, deadline);
        if (result != ncclSuccess && failed_call == nullptr) failed_call = call;
        return result;
      };
      const ncclResult_t result = enqueue(step);
      if (result != ncclSuccess) {
        if (aborted_.load()) {
          refuse();
          return request;
        }
        if (result == ncclInProgress) {
          request->complete(DT_ERR_TIMEOUT, prefix() + request->what() + ": " + failed_call +
                                                " was still in progress after " + std::to_string(timeout_ms_) +
                                                " ms");
          return request;
        }
        const std::string text = describe(failed_call, result, comm_);
        // An error of the communicator as a whole fails everything after it.
        ncclResult_t state = ncclSuccess;
        if (api_.comm_get_async_error(comm_, &state) == ncclSuccess && state != ncclSuccess &&
            state != ncclInProgress) {
          fail_all(status_of(state), describe("NCCL communicator", state, comm_));
        }
        request->complete(status_of(result), prefix() + request->what() + ": " + text);
        return request;
      }
      event->record(stream);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back({request, std::move(event), nullptr});
    }
    changed_.notify_all();
  } catch (const Error& e) {
    request->complete(e.status(), prefix() + request->what() + ": " + e.what());
  }
  return request;
}

void NcclBackend::fail_all(dt_status status, const std::string& message) {
  std::deque<Pending> drained;
  std::deque<SelfMessage> sends;
  std::deque<SelfMessage> recvs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ == DT_OK) {
      failed_ = status;
      failure_ = message;
    }
    drained.swap(pending_);
    sends.swap(self_sends_);
    recvs.swap(self_recvs_);
  }
  const auto fail = [&](const RequestPtr& request) {
    if (request) request->complete(status, prefix() + request->what() + ": " + message);
  };
  for (Pending& p : drained) {
    fail(p.request);
    fail(p.partner);
  }
  for (SelfMessage& m : sends) fail(m.request);
  for (SelfMessage& m : recvs) fail(m.request);
}

void NcclBackend::poll() {
  {
    std::unique_lock<std::mutex> lock(comm_mutex_, std::try_to_lock);
    if (lock.owns_lock() && comm_ != nullptr) {
      ncclResult_t state = ncclSuccess;
      if (api_.comm_get_async_error(comm_, &state) == ncclSuccess && state != ncclSuccess &&
          state != ncclInProgress) {
        const std::string text = describe("NCCL communicator", state, comm_);
        lock.unlock();
        fail_all(status_of(state), text);
        return;
      }
    }
  }
  std::vector<RequestPtr> finished;  // partners included
  dt_status error = DT_OK;
  std::string error_text;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!pending_.empty()) {
      Pending& front = pending_.front();
      bool done = false;
      try {
        done = front.event->query();
      } catch (const Error& e) {
        error = e.status();
        error_text = e.what();
        break;
      }
      // Requests complete in issue order (comm.h), also when operations run
      // on different streams: a later one waits for the ones before it.
      if (!done) break;
      finished.push_back(std::move(front.request));
      if (front.partner) finished.push_back(std::move(front.partner));
      spare_events_.push_back(std::move(front.event));
      pending_.pop_front();
    }
  }
  for (const RequestPtr& request : finished) request->complete(DT_OK);
  if (error != DT_OK) fail_all(error, "the CUDA device failed: " + error_text);
}

void NcclBackend::watch() {
  cudaSetDevice(device_);  // events are queried from here; an error shows in the queries
  bool aborted_comm = false;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (abort_requested_ && !aborted_comm) {
      lock.unlock();
      {
        // Waits for an NCCL call in progress on another thread: those
        // return promptly once aborted_ is set.
        std::lock_guard<std::mutex> comm_lock(comm_mutex_);
        if (comm_ != nullptr) {
          api_.comm_abort(comm_);
          comm_ = nullptr;
        }
      }
      aborted_comm = true;
      lock.lock();
      continue;
    }
    if (stop_) break;
    if (pending_.empty()) {
      changed_.wait(lock);
      continue;
    }
    lock.unlock();
    poll();
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    lock.lock();
  }
}

bool NcclBackend::wait(const RequestPtr& request, Clock::time_point deadline) {
  int round = 0;
  while (!request->done()) {
    if (Clock::now() >= deadline) return request->done();
    poll();
    if (request->done()) break;
    back_off(round);
  }
  return true;
}

void NcclBackend::abort() {
  if (aborted_.exchange(true)) return;
  fail_all(DT_ERR_ABORTED, "aborted");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    abort_requested_ = true;
  }
  changed_.notify_all();
}

RequestPtr NcclBackend::start_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) {
  const cudaStream_t stream = stream_of(send);
  return launch("allreduce", stream, [&](const Step& step) {
    return step("ncclAllReduce", api_.all_reduce(send.data, recv.data, static_cast<std::size_t>(send.count),
                                                 to_nccl(send.dtype), to_nccl(op), comm_, stream));
  });
}

RequestPtr NcclBackend::start_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) {
  const cudaStream_t stream = stream_of(send);
  return launch("reduce_scatter", stream, [&](const Step& step) {
    const std::size_t count = static_cast<std::size_t>(recv.count);
    if (send.data == recv.data && rank_ != 0 && count > 0) {
      // libdtrain's in place is recv at the start of send; NCCL's is recv at
      // block `rank` of send. Reduce there, then move the block to the start
      // (the two blocks do not overlap for rank > 0).
      void* mine = bytes_at(send.data, static_cast<std::size_t>(rank_) * recv.bytes());
      const ncclResult_t result = step("ncclReduceScatter", api_.reduce_scatter(send.data, mine, count,
                                                                                 to_nccl(send.dtype), to_nccl(op),
                                                                                 comm_, stream));
      if (result != ncclSuccess) return result;
      device::cuda::copy_async(recv.data, mine, recv.bytes(), stream);
      return ncclSuccess;
    }
    return step("ncclReduceScatter", api_.reduce_scatter(send.data, recv.data, count, to_nccl(send.dtype),
                                                         to_nccl(op), comm_, stream));
  });
}

RequestPtr NcclBackend::start_allgather(const TensorView& send, const TensorView& recv) {
  const cudaStream_t stream = stream_of(send);
  return launch("allgather", stream, [&](const Step& step) {
    const void* source = send.data;
    if (send.data == recv.data && rank_ != 0 && send.count > 0) {
      // In place: this rank's block moves to its slot first, which is
      // NCCL's in-place form.
      void* mine = bytes_at(recv.data, static_cast<std::size_t>(rank_) * send.bytes());
      device::cuda::copy_async(mine, send.data, send.bytes(), stream);
      source = mine;
    }
    return step("ncclAllGather", api_.all_gather(source, recv.data, static_cast<std::size_t>(send.count),
                                                 to_nccl(send.dtype), comm_, stream));
  });
}

RequestPtr NcclBackend::start_broadcast(const TensorView& buf, int root) {
  const cudaStream_t stream = stream_of(buf);
  return launch("broadcast", stream, [&](const Step& step) {
    return step("ncclBroadcast", api_.broadcast(buf.data, buf.data, static_cast<std::size_t>(buf.count),
                                                to_nccl(buf.dtype), root, comm_, stream));
  });
}

RequestPtr NcclBackend::start_alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                                        const TensorView& recv, const std::vector<std::int64_t>& recv_counts) {
  const cudaStream_t stream = stream_of(send);
  return launch("alltoallv", stream, [&](const Step& step) {
    const std::size_t element = dtype_size(send.dtype);
    const ncclDataType_t type = to_nccl(send.dtype);
    std::size_t send_total = 0;
    for (std::int64_t c : send_counts) send_total += static_cast<std::size_t>(c);
    const std::byte* source = static_cast<const std::byte*>(send.data);
    void* scratch = nullptr;
    if (send.data == recv.data && send_total > 0) {
      // In place: the blocks to send are copied aside (stream-ordered
      // allocation) before any block arrives.
      device::cuda::check(cudaMallocAsync(&scratch, send_total * element, stream),
                          "cudaMallocAsync of " + std::to_string(send_total * element) + " bytes");
      device::cuda::copy_async(scratch, send.data, send_total * element, stream);
      source = static_cast<const std::byte*>(scratch);
    }
    const ncclResult_t result = grouped(step, [&](const char** call) {
      std::size_t send_offset = 0;
      std::size_t recv_offset = 0;
      for (int peer = 0; peer < size_; ++peer) {
        const auto sc = static_cast<std::size_t>(send_counts[peer]);
        const auto rc = static_cast<std::size_t>(recv_counts[peer]);
        if (sc > 0) {
          *call = "ncclSend";
          const ncclResult_t sent = api_.send(source + send_offset * element, sc, type, peer, comm_, stream);
          if (sent != ncclSuccess) return sent;
        }
        if (rc > 0) {
          *call = "ncclRecv";
          const ncclResult_t received =
              api_.recv(bytes_at(recv.data, recv_offset * element), rc, type, peer, comm_, stream);
          if (received != ncclSuccess) return received;
        }
        send_offset += sc;
        recv_offset += rc;
      }
      return ncclSuccess;
    });
    if (scratch != nullptr) cudaFreeAsync(scratch, stream);
    return result;
  });
}

ncclResult_t NcclBackend::grouped(const Step& step, const std::function<ncclResult_t(const char** call)>& calls) {
  const char* call = "ncclGroupStart";
  ncclResult_t first = api_.group_start();
  if (first == ncclSuccess) first = calls(&call);
  // The group is always closed, also after a failed call inside it.
  const ncclResult_t ended = step("ncclGroupEnd", api_.group_end());
  if (first != ncclSuccess) return step(call, first);
  return ended;
}

RequestPtr NcclBackend::exchange(const char* op, cudaStream_t stream, const ExchangePlan& plan) {
  return launch(op, stream, [&](const Step& step) {
    if (plan.own_bytes > 0 && plan.own_from != plan.own_to) {
      device::cuda::copy_async(plan.own_to, plan.own_from, plan.own_bytes, stream);
    }
    return grouped(step, [&](const char** call) {
      for (const PlannedMessage& m : plan.sends) {
        *call = "ncclSend";
        const ncclResult_t sent = api_.send(m.data, m.bytes, ncclUint8, m.peer, comm_, stream);
        if (sent != ncclSuccess) return sent;
      }
      for (const PlannedMessage& m : plan.receives) {
        *call = "ncclRecv";
        const ncclResult_t received = api_.recv(m.data, m.bytes, ncclUint8, m.peer, comm_, stream);
        if (received != ncclSuccess) return received;
      }
      return ncclSuccess;
    });
  });
}

RequestPtr NcclBackend::start_reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root) {
  const cudaStream_t stream = stream_of(send);
  return launch("reduce", stream, [&](const Step& step) {
    return step("ncclReduce", api_.reduce(send.data, recv.data, static_cast<std::size_t>(send.count),
                                          to_nccl(send.dtype), to_nccl(op), root, comm_, stream));
  });
}

RequestPtr NcclBackend::start_gather(const TensorView& send, const TensorView& recv, int root) {
  return exchange("gather", stream_of(send), gather_plan(rank_, size_, send, recv, root));
}

RequestPtr NcclBackend::start_scatter(const TensorView& send, const TensorView& recv, int root) {
  return exchange("scatter", stream_of(recv), scatter_plan(rank_, size_, send, recv, root));
}

RequestPtr NcclBackend::start_allgatherv(const TensorView& send, const TensorView& recv,
                                         const std::vector<std::int64_t>& recv_counts) {
  return exchange("allgatherv", stream_of(send), allgatherv_plan(rank_, size_, send, recv, recv_counts));
}

RequestPtr NcclBackend::start_reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                                              const TensorView& recv, ReduceOp op) {
  const cudaStream_t stream = stream_of(send);
  return launch("reduce_scatterv", stream, [&](const Step& step) {
    const std::vector<std::int64_t> starts = block_starts(recv_counts);
    const std::size_t element = dtype_size(send.dtype);
    return grouped(step, [&](const char** call) {
      *call = "ncclReduce";
      for (int root = 0; root < size_; ++root) {
        if (recv_counts[root] == 0) continue;
        // recvbuff is read on the root alone: this rank's recv for its own block.
        const ncclResult_t reduced =
            api_.reduce(bytes_at(send.data, static_cast<std::size_t>(starts[root]) * element),
                        root == rank_ ? recv.data : nullptr, static_cast<std::size_t>(recv_counts[root]),
                        to_nccl(send.dtype), to_nccl(op), root, comm_, stream);
        if (reduced != ncclSuccess) return reduced;
      }
      return ncclSuccess;
    });
  });
}

RequestPtr NcclBackend::start_p2p_group(const std::vector<P2pOp>& ops) {
  const cudaStream_t stream = stream_of(ops.front().buf);
  return launch("p2p_group", stream, [&](const Step& step) {
    return grouped(step, [&](const char** call) {
      for (const P2pOp& op : ops) {
        *call = op.is_send ? "ncclSend" : "ncclRecv";
        const auto count = static_cast<std::size_t>(op.buf.count);
        const ncclResult_t result = op.is_send
                                        ? api_.send(op.buf.data, count, to_nccl(op.buf.dtype), op.peer, comm_, stream)
                                        : api_.recv(op.buf.data, count, to_nccl(op.buf.dtype), op.peer, comm_, stream);
        if (result != ncclSuccess) return result;
      }
      return ncclSuccess;
    });
  });
}

void NcclBackend::deliver_to_self(const SelfMessage& send, const SelfMessage& recv) {
  if (send.buf.dtype != recv.buf.dtype || send.buf.count != recv.buf.count) {
    const std::string text = "a message to itself of " + std::to_string(send.buf.count) + " " +
                             dtype_name(send.buf.dtype) + " met a receive of " + std::to_string(recv.buf.count) +
                             " " + dtype_name(recv.buf.dtype);
    recv.request->complete(DT_ERR_MISMATCH, prefix() + recv.request->what() + ": " + text);
    send.request->complete(DT_ERR_MISMATCH, prefix() + send.request->what() + ": " + text);
    return;
  }
  try {
    DeviceGuard guard(device_);
    // The copy runs on the receive's stream, after what was queued on the
    // send's stream up to now (the send's data is ready there).
    const cudaStream_t stream = stream_of(recv.buf);
    const cudaStream_t source = stream_of(send.buf);
    if (source != stream) {
      auto ready = take_event();
      ready->record(source);
      device::cuda::check(cudaStreamWaitEvent(stream, ready->get(), 0), "cudaStreamWaitEvent");
      std::lock_guard<std::mutex> lock(mutex_);
      spare_events_.push_back(std::move(ready));  // the wait holds what it needs
    }
    auto event = take_event();
    if (send.buf.data != recv.buf.data) {
      device::cuda::copy_async(recv.buf.data, send.buf.data, recv.buf.bytes(), stream);
    }
    event->record(stream);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back({recv.request, std::move(event), send.request});
    }
    changed_.notify_all();
  } catch (const Error& e) {
    recv.request->complete(e.status(), prefix() + recv.request->what() + ": " + e.what());
    send.request->complete(e.status(), prefix() + send.request->what() + ": " + e.what());
  }
}

// A send and a receive to oneself mirror each other: each is matched with
// the oldest waiting one of the other kind, or waits for one.
RequestPtr NcclBackend::to_self(const char* op, const TensorView& buf, bool is_send) {
  auto request = std::make_shared<Request>(std::string(op) + " #" + std::to_string(++sequence_));
  std::optional<SelfMessage> matched;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ != DT_OK || aborted_.load()) {
      request->complete(failed_ == DT_OK ? DT_ERR_ABORTED : failed_, prefix() + request->what() + ": " +
                                                                         (failed_ == DT_OK ? "aborted" : failure_));
      return request;
    }
    std::deque<SelfMessage>& mine = is_send ? self_sends_ : self_recvs_;
    std::deque<SelfMessage>& theirs = is_send ? self_recvs_ : self_sends_;
    if (theirs.empty()) {
      mine.push_back({buf, request});
    } else {
      matched = theirs.front();
      theirs.pop_front();
    }
  }
  if (matched) {
    if (is_send) {
      deliver_to_self({buf, request}, *matched);
    } else {
      deliver_to_self(*matched, {buf, request});
    }
  }
  return request;
}

RequestPtr NcclBackend::start_send(const TensorView& buf, int peer, int tag) {
  (void)tag;
  if (peer == rank_) return to_self("send", buf, true);
  const cudaStream_t stream = stream_of(buf);
  return launch("send", stream, [&](const Step& step) {
    return step("ncclSend", api_.send(buf.data, static_cast<std::size_t>(buf.count), to_nccl(buf.dtype), peer,
                                      comm_, stream));
  });
}

RequestPtr NcclBackend::start_recv(const TensorView& buf, int peer, int) {
  if (peer == rank_) return to_self("recv", buf, false);
  const cudaStream_t stream = stream_of(buf);
  return launch("recv", stream, [&](const Step& step) {
    return step("ncclRecv", api_.recv(buf.data, static_cast<std::size_t>(buf.count), to_nccl(buf.dtype), peer,
                                      comm_, stream));
  });
}

RequestPtr NcclBackend::start_barrier() {
  // A one-element allreduce completes on no rank before every rank has
  // started it. The element lives in stream-ordered scratch memory.
  return launch("barrier", stream_.get(), [&](const Step& step) {
    void* scratch = nullptr;
    device::cuda::check(cudaMallocAsync(&scratch, sizeof(std::int32_t), stream_.get()), "cudaMallocAsync");
    device::cuda::check(cudaMemsetAsync(scratch, 0, sizeof(std::int32_t), stream_.get()), "cudaMemsetAsync");
    const ncclResult_t result =
        step("ncclAllReduce", api_.all_reduce(scratch, scratch, 1, ncclInt32, ncclSum, comm_, stream_.get()));
    cudaFreeAsync(scratch, stream_.get());
    return result;
  });
}

std::unique_ptr<Backend> NcclBackend::split(int color, int key, int* new_rank, int* new_size) {
  std::lock_guard<std::mutex> lock(comm_mutex_);
  if (comm_ == nullptr || aborted_.load()) raise(DT_ERR_ABORTED, prefix() + "split: the NCCL communicator was aborted");
  DeviceGuard guard(device_);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  ncclConfig_t config = nonblocking_config();
  ncclComm_t child = nullptr;
  ncclResult_t rc = api_.comm_split(comm_, to_nccl_color(color), key, &child, &config);
  rc = settle_setup(api_, child != nullptr ? child : comm_, rc, deadline);
  if (rc == ncclSuccess && child != nullptr) rc = settle(comm_, rc, deadline);
  if (rc != ncclSuccess) {
    const std::string text = rc == ncclInProgress ? "ncclCommSplit did not finish within " +
                                                        std::to_string(timeout_ms_) + " ms"
                                                  : describe("ncclCommSplit", rc, comm_);
    if (child != nullptr) api_.comm_abort(child);
    raise(rc == ncclInProgress ? DT_ERR_TIMEOUT : status_of(rc), prefix() + "split: " + text);
  }
  if (child == nullptr) return nullptr;
  int rank = -1;
  int size = 0;
  const ncclResult_t queried = api_.comm_user_rank(child, &rank);
  const ncclResult_t counted = queried == ncclSuccess ? api_.comm_count(child, &size) : queried;
  if (counted != ncclSuccess) {
    api_.comm_abort(child);
    raise(status_of(counted), prefix() + "split: " + describe("ncclCommUserRank/ncclCommCount", counted, child));
  }
  *new_rank = rank;
  *new_size = size;
  try {
    return std::make_unique<NcclBackend>(api_, child, rank, size, device_, timeout_ms_);
  } catch (...) {
    api_.comm_abort(child);
    throw;
  }
}

}  // namespace dtrain::comm::nccl
