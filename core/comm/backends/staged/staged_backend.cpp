#include "comm/backends/staged/staged_backend.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <utility>

#include "base/env.hpp"
#include "base/error.hpp"

namespace dtrain::comm::staged {

namespace {

bool on_device(const TensorView& view) { return view.memory == Memory::cuda; }

std::byte* element_at(const TensorView& view, std::int64_t index) {
  return static_cast<std::byte*>(view.data) + index * static_cast<std::int64_t>(dtype_size(view.dtype));
}

std::size_t bytes_of(std::int64_t count, std::size_t element) { return static_cast<std::size_t>(count) * element; }

void back_off(int& round) {
  if (++round < 64) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(10));
  }
}

}  // namespace

struct StagedBackend::Job {
  RequestPtr outer;
  std::atomic<std::size_t> remaining{0};
};

Tuning tuning_from_env() {
  Tuning tuning;
  if (auto bytes = env::get_int("DTRAIN_STAGED_CHUNK_BYTES", 4096, 1 << 30)) {
    tuning.chunk_bytes = static_cast<std::size_t>(*bytes);
  }
  if (auto depth = env::get_int("DTRAIN_STAGED_DEPTH", 1, 64)) tuning.depth = *depth;
  return tuning;
}

std::int64_t chunk_elements(std::size_t chunk_bytes, std::size_t element, std::int64_t rows_per_element) {
  const std::size_t per = element * static_cast<std::size_t>(std::max<std::int64_t>(1, rows_per_element));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(chunk_bytes / per));
}

std::vector<ChunkRange> chunk_ranges(std::int64_t count, std::int64_t chunk) {
  std::vector<ChunkRange> ranges;
  if (count <= 0) {
    ranges.push_back({0, 0});
    return ranges;
  }
  for (std::int64_t first = 0; first < count; first += chunk) ranges.push_back({first, std::min(chunk, count - first)});
  return ranges;
}

Lanes device_lanes(int device) {
  return {device::make_queue(Memory::cuda, device), device::make_queue(Memory::cuda, device)};
}

StagedBackend::StagedBackend(Backend& host, Lanes lanes, int rank, int size, int timeout_ms, const Tuning& tuning)
    : host_(host), lanes_(std::move(lanes)), rank_(rank), size_(size), timeout_ms_(timeout_ms), tuning_(tuning) {
  finisher_ = std::thread([this] { finish(); });
}

StagedBackend::~StagedBackend() {
  abort();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  finisher_.join();
  // No copy may still touch staging memory when it is freed.
  drain();
  for (InFlight& chunk : in_flight_) {
    chunk.job->outer->complete(DT_ERR_ABORTED, "rank " + std::to_string(rank_) + ": " + chunk.job->outer->what() +
                                                   ": the communicator was destroyed");
    if (chunk.staging.data != nullptr) lanes_.to_host->release_pinned(chunk.staging.data);
  }
  for (const Staging& spare : spare_) lanes_.to_host->release_pinned(spare.data);
}

void StagedBackend::drain() noexcept {
  for (device::Queue* lane : {lanes_.to_host.get(), lanes_.to_device.get()}) {
    try {
      lane->synchronize();
    } catch (...) {
      // A failed device runs nothing more; its error went to the requests.
    }
  }
}

std::size_t StagedBackend::staging_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_bytes_;
}

void StagedBackend::abort() {
  aborted_.store(true, std::memory_order_release);
  std::vector<RequestPtr> outers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const InFlight& chunk : in_flight_) outers.push_back(chunk.job->outer);
  }
  changed_.notify_all();
  for (const RequestPtr& outer : outers) {
    outer->complete(DT_ERR_ABORTED, "rank " + std::to_string(rank_) + ": " + outer->what() + " aborted");
  }
}

StagedBackend::Staging StagedBackend::acquire(std::size_t bytes, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (in_use_ >= tuning_.depth) {
    if (aborted_.load()) raise(DT_ERR_ABORTED, "aborted");
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && in_use_ >= tuning_.depth) {
      raise(DT_ERR_TIMEOUT, "no staging buffer came free within " + std::to_string(timeout_ms_) + " ms");
    }
  }
  if (aborted_.load()) raise(DT_ERR_ABORTED, "aborted");
  ++in_use_;
  if (bytes == 0) return {};
  // The smallest cached buffer that fits.
  auto best = spare_.end();
  for (auto it = spare_.begin(); it != spare_.end(); ++it) {
    if (it->capacity >= bytes && (best == spare_.end() || it->capacity < best->capacity)) best = it;
  }
  if (best != spare_.end()) {
    Staging staging = *best;
    spare_.erase(best);
    return staging;
  }
  lock.unlock();
  const std::size_t capacity = std::max(bytes, tuning_.chunk_bytes);
  void* data = nullptr;
  try {
    data = lanes_.to_host->allocate_pinned(capacity);
  } catch (...) {
    lock.lock();
    --in_use_;
    changed_.notify_all();
    throw;
  }
  lock.lock();
  held_bytes_ += capacity;
  return {static_cast<std::byte*>(data), capacity};
}

void StagedBackend::release(Staging staging) {
  Staging evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_use_;
    if (staging.data != nullptr) {
      spare_.push_back(staging);
      // Keep as many buffers as chunks may be in flight; free the smallest
      // beyond that (a large message's buffer stays for the next one).
      if (static_cast<int>(spare_.size()) > tuning_.depth) {
        auto smallest = std::min_element(spare_.begin(), spare_.end(),
                                         [](const Staging& a, const Staging& b) { return a.capacity < b.capacity; });
        evicted = *smallest;
        spare_.erase(smallest);
        held_bytes_ -= evicted.capacity;
      }
    }
  }
  changed_.notify_all();
  if (evicted.data != nullptr) lanes_.to_host->release_pinned(evicted.data);
}

void StagedBackend::wait_for(device::Fence& fence, Clock::time_point deadline) {
  int round = 0;
  while (!fence.reached()) {
    if (aborted_.load()) raise(DT_ERR_ABORTED, "aborted");
    if (Clock::now() >= deadline) {
      raise(DT_ERR_TIMEOUT, "copying to pinned host memory took longer than " + std::to_string(timeout_ms_) + " ms");
    }
    back_off(round);
  }
}

RequestPtr StagedBackend::run(const char* op, void* stream, std::vector<Piece> pieces) {
  auto outer = std::make_shared<Request>(std::string(op) + " #" + std::to_string(++sequence_));
  const std::string prefix = "rank " + std::to_string(rank_) + ": " + outer->what() + ": ";
  if (aborted_.load()) {
    outer->complete(DT_ERR_ABORTED, prefix + "aborted");
    return outer;
  }
  auto job = std::make_shared<Job>();
  job->outer = outer;
  job->remaining = pieces.size();
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  try {
    lanes_.to_host->wait_for(stream);
    lanes_.to_device->wait_for(stream);
    for (Piece& piece : pieces) {
      Staging staging = acquire(piece.staging_bytes, deadline);
      try {
        for (const Transfer& t : piece.in) {
          lanes_.to_host->copy_rows(staging.data + t.staging_offset, t.staging_pitch, t.user, t.user_pitch, t.width,
                                    t.rows);
        }
        if (!piece.in.empty()) wait_for(*lanes_.to_host->fence(), deadline);
        RequestPtr inner = piece.start(staging.data);
        {
          std::lock_guard<std::mutex> lock(mutex_);
          in_flight_.push_back({job, std::move(inner), staging, std::move(piece.out), nullptr});
        }
        changed_.notify_all();
      } catch (...) {
        release(staging);
        throw;
      }
    }
  } catch (const Error& e) {
    // Later chunks are not started: the error (a timeout, an abort, a device
    // failure) leaves the communicator unusable anyway.
    outer->complete(e.status(), prefix + e.what());
  }
  return outer;
}

bool StagedBackend::advance(InFlight& chunk) {
  const RequestPtr& outer = chunk.job->outer;
  try {
    if (!chunk.fence) {
      if (!chunk.inner->done()) return false;
      const dt_status status = chunk.inner->status();
      if (status != DT_OK) {
        outer->complete(status, chunk.inner->message());
        release(chunk.staging);
        return true;
      }
      if (!chunk.out.empty()) {
        for (const Transfer& t : chunk.out) {
          lanes_.to_device->copy_rows(t.user, t.user_pitch, chunk.staging.data + t.staging_offset, t.staging_pitch,
                                      t.width, t.rows);
        }
        chunk.fence = lanes_.to_device->fence();
      }
    }
    if (chunk.fence && !chunk.fence->reached()) return false;
  } catch (const Error& e) {
    outer->complete(e.status(), "rank " + std::to_string(rank_) + ": " + outer->what() + ": " + e.what());
    release(chunk.staging);
    return true;
  }
  release(chunk.staging);
  if (chunk.job->remaining.fetch_sub(1) == 1) outer->complete(DT_OK);
  return true;
}

void StagedBackend::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (stop_) return;
    if (in_flight_.empty()) {
      changed_.wait(lock);
      continue;
    }
    std::deque<InFlight> work;
    work.swap(in_flight_);
    lock.unlock();
    std::deque<InFlight> kept;
    for (InFlight& chunk : work) {
      if (!advance(chunk)) kept.push_back(std::move(chunk));
    }
    const bool waiting = !kept.empty();
    lock.lock();
    // Unfinished chunks go back ahead of those started meanwhile.
    while (!kept.empty()) {
      in_flight_.push_front(std::move(kept.back()));
      kept.pop_back();
    }
    if (waiting) changed_.wait_for(lock, std::chrono::microseconds(20));
  }
}

RequestPtr StagedBackend::start_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) {
  const std::size_t element = dtype_size(send.dtype);
  const bool send_device = on_device(send);
  const bool recv_device = on_device(recv);
  std::vector<Piece> pieces;
  for (const ChunkRange c : chunk_ranges(send.count, chunk_elements(tuning_.chunk_bytes, element, 1))) {
    const std::size_t bytes = bytes_of(c.length, element);
    Piece piece;
    piece.staging_bytes = bytes;
    if (send_device) piece.in.push_back({0, bytes, element_at(send, c.first), bytes, bytes, 1});
    if (recv_device) piece.out.push_back({0, bytes, element_at(recv, c.first), bytes, bytes, 1});
    // Both on the device: the host operation runs in place on the staging.
    piece.start = [this, send, recv, c, send_device, recv_device, op](std::byte* staging) {
      const TensorView in = send_device ? host_view(staging, c.length, send.dtype) : send.slice(c.first, c.length);
      const TensorView out = recv_device ? host_view(staging, c.length, recv.dtype) : recv.slice(c.first, c.length);
      return host_.allreduce(in, out, op);
    };
    pieces.push_back(std::move(piece));
  }
  return run("allreduce", send.stream, std::move(pieces));
}

RequestPtr StagedBackend::start_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) {
  const std::size_t element = dtype_size(send.dtype);
  const std::int64_t count = recv.count;
  const std::int64_t n = size_;
  const auto ranges = chunk_ranges(count, chunk_elements(tuning_.chunk_bytes, element, n + 1));
  // A host send cut into chunks is packed too: each chunk needs its part
  // of every block, contiguous.
  const bool stage_in = on_device(send) || ranges.size() > 1;
  const bool stage_out = on_device(recv);
  std::vector<Piece> pieces;
  for (const ChunkRange c : ranges) {
    const std::size_t width = bytes_of(c.length, element);
    const std::size_t in_bytes = stage_in ? width * static_cast<std::size_t>(n) : 0;
    Piece piece;
    piece.staging_bytes = in_bytes + (stage_out ? width : 0);
    if (stage_in) {
      piece.in.push_back({0, width, element_at(send, c.first), bytes_of(count, element), width,
                          static_cast<std::size_t>(n)});
    }
    if (stage_out) piece.out.push_back({in_bytes, width, element_at(recv, c.first), width, width, 1});
    piece.start = [this, send, recv, c, n, in_bytes, stage_in, stage_out, op](std::byte* staging) {
      const TensorView in = stage_in ? host_view(staging, n * c.length, send.dtype) : send;
      const TensorView out = stage_out ? host_view(staging + in_bytes, c.length, recv.dtype)
                                       : recv.slice(c.first, c.length);
      return host_.reduce_scatter(in, out, op);
    };
    pieces.push_back(std::move(piece));
  }
  return run("reduce_scatter", send.stream, std::move(pieces));
}

RequestPtr StagedBackend::start_allgather(const TensorView& send, const TensorView& recv) {
  const std::size_t element = dtype_size(send.dtype);
  const std::int64_t count = send.count;
  const std::int64_t n = size_;
  const auto ranges = chunk_ranges(count, chunk_elements(tuning_.chunk_bytes, element, n + 1));
  const bool stage_in = on_device(send);
  // A host recv cut into chunks is unpacked too.
  const bool stage_out = on_device(recv) || ranges.size() > 1;
  std::vector<Piece> pieces;
  for (const ChunkRange c : ranges) {
    const std::size_t width = bytes_of(c.length, element);
    const std::size_t in_bytes = stage_in ? width : 0;
    Piece piece;
    piece.staging_bytes = in_bytes + (stage_out ? width * static_cast<std::size_t>(n) : 0);
    if (stage_in) piece.in.push_back({0, width, element_at(send, c.first), width, width, 1});
    if (stage_out) {
      piece.out.push_back({in_bytes, width, element_at(recv, c.first), bytes_of(count, element), width,
                           static_cast<std::size_t>(n)});
    }
    piece.start = [this, send, recv, c, n, in_bytes, stage_in, stage_out](std::byte* staging) {
      const TensorView in = stage_in ? host_view(staging, c.length, send.dtype) : send.slice(c.first, c.length);
      const TensorView out = stage_out ? host_view(staging + in_bytes, n * c.length, recv.dtype) : recv;
      return host_.allgather(in, out);
    };
    pieces.push_back(std::move(piece));
  }
  return run("allgather", send.stream, std::move(pieces));
}

RequestPtr StagedBackend::start_broadcast(const TensorView& buf, int root) {
  const std::size_t element = dtype_size(buf.dtype);
  const bool root_here = root == rank_;
  std::vector<Piece> pieces;
  for (const ChunkRange c : chunk_ranges(buf.count, chunk_elements(tuning_.chunk_bytes, element, 1))) {
    const std::size_t bytes = bytes_of(c.length, element);
    Piece piece;
    piece.staging_bytes = bytes;
    // The root sends what it has; the others receive into the staging.
    (root_here ? piece.in : piece.out).push_back({0, bytes, element_at(buf, c.first), bytes, bytes, 1});
    piece.start = [this, buf, c, root](std::byte* staging) {
      return host_.broadcast(host_view(staging, c.length, buf.dtype), root);
    };
    pieces.push_back(std::move(piece));
  }
  return run("broadcast", buf.stream, std::move(pieces));
}

RequestPtr StagedBackend::whole(const char* op, const TensorView& send, std::int64_t send_count,
                                const TensorView& recv, std::int64_t recv_count,
                                std::function<RequestPtr(const TensorView& in, const TensorView& out)> start) {
  const std::size_t element = dtype_size(send.dtype);
  const bool stage_in = on_device(send);
  const bool stage_out = on_device(recv);
  const std::size_t in_bytes = stage_in ? bytes_of(send_count, element) : 0;
  const std::size_t out_bytes = stage_out ? bytes_of(recv_count, element) : 0;
  Piece piece;
  piece.staging_bytes = in_bytes + out_bytes;
  if (stage_in) piece.in.push_back({0, in_bytes, send.data, in_bytes, in_bytes, 1});
  if (stage_out) piece.out.push_back({in_bytes, out_bytes, recv.data, out_bytes, out_bytes, 1});
  piece.start = [send, recv, send_count, recv_count, in_bytes, stage_in, stage_out,
                 start = std::move(start)](std::byte* staging) {
    const TensorView in = stage_in ? host_view(staging, send_count, send.dtype) : send;
    const TensorView out = stage_out ? host_view(staging + in_bytes, recv_count, recv.dtype) : recv;
    return start(in, out);
  };
  std::vector<Piece> pieces;
  pieces.push_back(std::move(piece));
  return run(op, send.stream, std::move(pieces));
}

RequestPtr StagedBackend::start_alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                                          const TensorView& recv, const std::vector<std::int64_t>& recv_counts) {
  // The counts of peers need not agree on any chunking.
  const std::int64_t send_total = std::accumulate(send_counts.begin(), send_counts.end(), std::int64_t{0});
  const std::int64_t recv_total = std::accumulate(recv_counts.begin(), recv_counts.end(), std::int64_t{0});
  return whole("alltoallv", send, send_total, recv, recv_total,
               [this, send_counts, recv_counts](const TensorView& in, const TensorView& out) {
                 return host_.alltoallv(in, send_counts, out, recv_counts);
               });
}

RequestPtr StagedBackend::start_reduce(const TensorView& send, const TensorView& recv, ReduceOp op, int root) {
  return whole(
      "reduce", send, send.count, recv, recv.count,
      [this, op, root](const TensorView& in, const TensorView& out) { return host_.reduce(in, out, op, root); });
}

RequestPtr StagedBackend::start_gather(const TensorView& send, const TensorView& recv, int root) {
  return whole("gather", send, send.count, recv, recv.count,
               [this, root](const TensorView& in, const TensorView& out) { return host_.gather(in, out, root); });
}

RequestPtr StagedBackend::start_scatter(const TensorView& send, const TensorView& recv, int root) {
  return whole("scatter", send, send.count, recv, recv.count,
               [this, root](const TensorView& in, const TensorView& out) { return host_.scatter(in, out, root); });
}

RequestPtr StagedBackend::start_allgatherv(const TensorView& send, const TensorView& recv,
                                           const std::vector<std::int64_t>& recv_counts) {
  // Only the blocks are staged out: recv past their sum is left alone.
  const std::int64_t total = std::accumulate(recv_counts.begin(), recv_counts.end(), std::int64_t{0});
  return whole("allgatherv", send, send.count, recv, total,
               [this, recv_counts](const TensorView& in, const TensorView& out) {
                 return host_.allgatherv(in, out, recv_counts);
               });
}

RequestPtr StagedBackend::start_reduce_scatterv(const TensorView& send, const std::vector<std::int64_t>& recv_counts,
                                                const TensorView& recv, ReduceOp op) {
  const std::int64_t total = std::accumulate(recv_counts.begin(), recv_counts.end(), std::int64_t{0});
  return whole("reduce_scatterv", send, total, recv, recv.count,
               [this, recv_counts, op](const TensorView& in, const TensorView& out) {
                 return host_.reduce_scatterv(in, recv_counts, out, op);
               });
}

RequestPtr StagedBackend::start_p2p_group(const std::vector<P2pOp>& ops) {
  // Every device tensor of the group gets its own part of one staging
  // area: sends staged in, receives staged out.
  Piece piece;
  std::vector<std::size_t> offsets(ops.size(), 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TensorView& buf = ops[i].buf;
    if (!on_device(buf)) continue;
    offsets[i] = piece.staging_bytes;
    const std::size_t bytes = buf.bytes();
    (ops[i].is_send ? piece.in : piece.out).push_back({offsets[i], bytes, buf.data, bytes, bytes, 1});
    piece.staging_bytes += bytes;
  }
  piece.start = [this, ops, offsets](std::byte* staging) {
    std::vector<P2pOp> staged = ops;
    for (std::size_t i = 0; i < staged.size(); ++i) {
      if (on_device(ops[i].buf)) staged[i].buf = host_view(staging + offsets[i], ops[i].buf.count, ops[i].buf.dtype);
    }
    return host_.p2p_group(staged);
  };
  std::vector<Piece> pieces;
  pieces.push_back(std::move(piece));
  return run("p2p_group", ops.front().buf.stream, std::move(pieces));
}

RequestPtr StagedBackend::start_send(const TensorView& buf, int peer, int tag) {
  return point_to_point("send", buf, true,
                        [this, peer, tag](const TensorView& staged) { return host_.send(staged, peer, tag); });
}

RequestPtr StagedBackend::start_recv(const TensorView& buf, int peer, int tag) {
  return point_to_point("recv", buf, false,
                        [this, peer, tag](const TensorView& staged) { return host_.recv(staged, peer, tag); });
}

// Send and receive differ only in the direction the whole buffer is staged
// and in the host call, so one piece is built here for both.
RequestPtr StagedBackend::point_to_point(const char* op, const TensorView& buf, bool outgoing,
                                         std::function<RequestPtr(const TensorView& staged)> start) {
  const std::size_t bytes = buf.bytes();
  Piece piece;
  piece.staging_bytes = bytes;
  (outgoing ? piece.in : piece.out).push_back({0, bytes, buf.data, bytes, bytes, 1});
  piece.start = [buf, start = std::move(start)](std::byte* staging) {
    return start(host_view(staging, buf.count, buf.dtype));
  };
  std::vector<Piece> pieces;
  pieces.push_back(std::move(piece));
  return run(op, buf.stream, std::move(pieces));
}

RequestPtr StagedBackend::start_barrier() { return host_.barrier(); }
                                        
                                        std::unique_ptr<Backend> StagedBackend::split(int, int, int*, int*) {
  raise(DT_ERR_INTERNAL, "a staged backend is split by the router that owns its host backend");
}

}  // namespace dtrain::comm::staged
