// CUDA tensors over a host backend (UCX, or self for a world of one), for
// UCX builds without CUDA memory support: a decorator that cuts each
// operation into chunks, copies each chunk of device data into pinned host
// memory, runs the host backend's operation on it, and copies the result
// back, with up to `depth` chunks in flight so that copies overlap
// communication (chunk i+1 is copied down while chunk i is on the network
// and chunk i-1 is copied up).
//
// The calling thread copies chunks down and starts their host operations,
// in order, so host operations start in the same order on every rank as the
// host backend requires; it returns once the last chunk has started. A
// finisher thread copies results up and completes the request when every
// chunk is done. Reductions run on the host backend's CPU kernels.
//
// Collectives are cut at chunk_bytes: every rank must then see the same
// sizes and tuning, and use CUDA tensors on every rank or on none (a host
// tensor larger than a chunk is one host operation, not several).
// Copies run on two device::Queues of the backend's own (Lanes), one per
// direction, so that copies down and up overlap; pinned staging memory
// comes from the first.
//
// Streams: an operation's copies start after the work queued so far on the
// caller's stream (the views' `stream`; Queue::wait_for), so the data the
// caller produced there is what is sent, without blocking the caller. The
// results are written by the lanes' own streams and are in place when the
// request completes; the caller's stream is not ordered after them (wait
// for the request before using them).
//
// Point-to-point messages and all-to-all are never cut: a CUDA send matches
// a host receive. Tensors on the host side of an operation (a host send with
// a CUDA recv) are used in place where their layout allows.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/backends/per_kind.hpp"
#include "device/queue.hpp"

namespace dtrain::comm::staged {

struct Tuning {
  std::size_t chunk_bytes = std::size_t{4} << 20;  // DTRAIN_STAGED_CHUNK_BYTES (4 KiB .. 1 GiB)
  int depth = 4;                                   // DTRAIN_STAGED_DEPTH: chunks in flight (1 .. 64)
};

// The tuning the environment asks for (DT_ERR_INVALID_ARGUMENT, naming the
// variable, for values out of range).
Tuning tuning_from_env();

// Elements per chunk of an operation whose staging holds `rows_per_element`
// elements per chunk element (1 for allreduce and broadcast; size + 1 for
// reduce_scatter and allgather, which stage size blocks and one result):
// at least 1.
std::int64_t chunk_elements(std::size_t chunk_bytes, std::size_t element, std::int64_t rows_per_element);

// The queues the staged path copies through: device to host, and host to
// device. Each has a stream of its own on the device.
struct Lanes {
  std::unique_ptr<device::Queue> to_host;
  std::unique_ptr<device::Queue> to_device;
};
// Two Queues on CUDA device `device`.
Lanes device_lanes(int device);

// The chunks [first, first + length) of `count` elements; one empty chunk for
// count 0, so that every rank starts the same number of host operations.
struct ChunkRange {
  std::int64_t first;
  std::int64_t length;
};
std::vector<ChunkRange> chunk_ranges(std::int64_t count, std::int64_t chunk);

class StagedBackend final : public PerKindBackend<StagedBackend> {
 public:
  // `host` outlives this backend. `rank` and `size` are the host backend's.
  StagedBackend(Backend& host, Lanes lanes, int rank, int size, int timeout_ms, const Tuning& tuning);
  ~StagedBackend() override;

  const char* name() const override { return "staged"; }

  // Splitting belongs to whoever owns the host backend (the router).
  std::unique_ptr<Backend> split(int color, int key, int* new_rank, int* new_size) override;
  void abort() override;

  // Pinned bytes held now (in flight and cached), for tests.
  std::size_t staging_bytes() const;

  // One chunk of an operation: what is copied into its staging memory
  // first (device to host), the host operation on it, and what is copied
  // out of it afterwards (host to device). Staging offsets are relative to
  // the chunk's staging memory.
  struct Transfer {
    std::size_t staging_offset = 0;
    std::size_t staging_pitch = 0;
    void* user = nullptr;
    std::size_t user_pitch = 0;
    std::size_t width = 0;
    std::size_t rows = 1;
  };
  struct Piece {
    std::size_t staging_bytes = 0;
    std::vector<Transfer> in;
    std::function<RequestPtr(std::byte* staging)> start;
    std::vector<Transfer> out;
  };

 private:
  // The operations start() runs, by kind.
  friend class PerKindBackend<StagedBackend>;
  RequestPtr start_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op);
  RequestPtr start_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op);
  RequestPtr start_allgather(const TensorView& send, const TensorView& recv);
  RequestPtr start_broadcast(const TensorView& buf, int root);
  RequestPtr start_alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                             const TensorView& recv, const std::vector<std::int64_t>& recv_counts);
  RequestPtr start_send(const TensorView& buf, int peer, int tag);
  RequestPtr start_recv(const TensorView& buf, int peer, int tag);
  RequestPtr start_barrier();
  // The rooted and uneven collectives and groups are one host operation
  // each, never cut, like all-to-all.
  RequestPtr start_reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root);
  RequestPtr start_gather(const TensorView& send, const TensorView& recv, int root);
  RequestPtr start_scatter(const TensorView& send, const TensorView& recv, int root);
  RequestPtr start_allgatherv(const TensorView& send, const TensorView& recv,
                              const std::vector<std::int64_t>& recv_counts);
  RequestPtr start_reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                                   const TensorView& recv, ReduceOp op);
  RequestPtr start_p2p_group(const std::vector<P2pOp>& ops);

  struct Job;
  struct Staging {
    std::byte* data = nullptr;
    std::size_t capacity = 0;
  };
  struct InFlight {
    std::shared_ptr<Job> job;
    RequestPtr inner;
    Staging staging;
    std::vector<Transfer> out;
    std::unique_ptr<device::Fence> fence;  // set once the results are being copied out
  };

  // Starts `pieces` after the work queued on `stream` (nullptr: the legacy
  // default stream).
  RequestPtr run(const char* op, void* stream, std::vector<Piece> pieces);
  // One host operation, never cut, on the first `send_count` elements of
  // `send` (staged in when on the device) and the first `recv_count` of
  // `recv` (staged out); `start` gets the views the host backend uses.
  RequestPtr whole(const char* op, const TensorView& send, std::int64_t send_count, const TensorView& recv,
                   std::int64_t recv_count,
                   std::function<RequestPtr(const TensorView& in, const TensorView& out)> start);
  // send and recv: the whole buffer staged in (outgoing) or out, and
  // `start` given the staged view.
  RequestPtr point_to_point(const char* op, const TensorView& buf, bool outgoing,
                            std::function<RequestPtr(const TensorView& staged)> start);
  Staging acquire(std::size_t bytes, Clock::time_point deadline);
  void release(Staging staging);
  void wait_for(device::Fence& fence, Clock::time_point deadline);
  // Waits for every queued copy, ignoring errors (before memory is freed).
  void drain() noexcept;
  void finish();
  // Advances one chunk; true when it is done with.
  bool advance(InFlight& chunk);

  Backend& host_;
  Lanes lanes_;
  const int rank_;
  const int size_;
  const int timeout_ms_;
  const Tuning tuning_;
  std::atomic<bool> aborted_{false};
  std::uint64_t sequence_ = 0;  // the calling thread's only

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::vector<Staging> spare_;
  std::size_t held_bytes_ = 0;
  int in_use_ = 0;
  std::deque<InFlight> in_flight_;
  bool stop_ = false;
  std::thread finisher_;
};

}  // namespace dtrain::comm::staged
