// Ring schedules. Each buffer is cut into one segment per rank and each
// segment into chunks; lane i carries chunk i of every segment around the
// ring, so while one chunk is being reduced the next is already on the wire.
// Messages of a lane between two ranks keep their order (UCP matches equal
// tags from one sender in order), so the lane number alone tells them apart.

#include <cstring>
#include <vector>

#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/chunks.hpp"
#include "comm/schedules/combine.hpp"

namespace dtrain::comm::schedule {

namespace {

std::byte* bytes_of(const TensorView& view) { return static_cast<std::byte*>(view.data); }

// Per-slot transfers, reused by the lanes that run in the slot one after another.
struct SlotTransfers {
  Transfer* out = nullptr;
  Transfer* in = nullptr;
};

// Reduce-scatter then allgather. After the first phase rank r holds the
// reduced segment r + 1; the second passes the reduced segments around.
// Out of place, `send` is read where it is (this rank's segment is sent
// from it, and each partial sum is `send` combined with what arrived), so
// the buffer is never copied whole into `recv` first.
class RingAllreduce final : public Operation {
 public:
  RingAllreduce(const TensorView& send, const TensorView& recv, ReduceOp op)
      : Operation("allreduce", Kind::collective), send_(send), recv_(recv), combine_(op, recv.dtype) {}

 protected:
  void prepare() override {
    if (recv_.count == 0) return;
    if (size() == 1) {
      if (send_.data != recv_.data) std::memcpy(recv_.data, send_.data, recv_.bytes());
      return;
    }
    const std::int64_t longest = segment(recv_.count, size(), 0).count;
    chunk_ = chunk_elements(group().pipelining, recv_.dtype, longest);
    lanes_ = lanes_for(longest, chunk_);
    window_ = std::min(group().pipelining.depth, lanes_);
    element_ = dtype_size(recv_.dtype);
    scratch_ = scratch(static_cast<std::size_t>(window_ * chunk_) * element_);
    for (int s = 0; s < window_; ++s) slot_transfers_.push_back({&transfer(), &transfer()});
  }
  int lane_count() const override { return lanes_; }
  int window() const override { return window_; }

  Task lane(int index, int slot) override {
    const int n = size();
    const int r = rank();
    const int right = mod(r + 1, n);
    const int left = mod(r - 1, n);
    Transfer& out = *slot_transfers_[slot].out;
    Transfer& in = *slot_transfers_[slot].in;
    std::byte* tmp = scratch_.get() + static_cast<std::size_t>(slot * chunk_) * element_;
    std::byte* buf = bytes_of(recv_);
    const auto* mine = static_cast<const std::byte*>(send_.data);
    auto piece = [&](int seg) { return chunk(segment(recv_.count, n, seg), chunk_, index); };

    for (int s = 0; s < n - 1; ++s) {
      // Step 0 sends this rank's own segment; later ones the partial sum
      // the step before made in `recv`.
      const std::byte* from = s == 0 ? mine : buf;
      const Range give = piece(mod(r - s, n));
      const Range take = piece(mod(r - s - 1, n));
      if (give.count > 0) send(out, right, index, from + give.first * element_, give.count * element_);
      if (take.count > 0) recv(in, left, index, tmp, take.count * element_);
      co_await all_of(out, in);
      if (take.count > 0) {
        combine_.apply(buf + take.first * element_, mine + take.first * element_, tmp, take.count);
      }
    }
    const Range own = piece(mod(r + 1, n));
    combine_.finish(buf + own.first * element_, own.count, n);
    for (int s = 0; s < n - 1; ++s) {
      const Range give = piece(mod(r + 1 - s, n));
      const Range take = piece(mod(r - s, n));
      if (give.count > 0) send(out, right, index, buf + give.first * element_, give.count * element_);
      if (take.count > 0) recv(in, left, index, buf + take.first * element_, take.count * element_);
      co_await all_of(out, in);
    }
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  const Combine combine_;
  std::int64_t chunk_ = 1;
  int lanes_ = 0;
  int window_ = 1;
  std::size_t element_ = 1;
  Scratch scratch_;
  std::vector<SlotTransfers> slot_transfers_;
};

// Rank r ends with segment r of the sum. Partial sums travel in scratch
// buffers (two per slot: one arriving while the other leaves), so `send` is
// only read, and the result is written once, at the end of each lane —
// which keeps the in-place case (recv at the start of send) safe: lane i
// only ever reads and writes chunk i of any segment.
class RingReduceScatter final : public Operation {
 public:
  RingReduceScatter(const TensorView& send, const TensorView& recv, ReduceOp op)
      : Operation("reduce_scatter", Kind::collective), send_(send), recv_(recv), combine_(op, recv.dtype) {}

 protected:
  void prepare() override {
    element_ = dtype_size(recv_.dtype);
    if (recv_.count == 0) return;
    if (size() == 1) {
      if (send_.data != recv_.data) std::memmove(recv_.data, send_.data, recv_.bytes());
      return;
    }
    chunk_ = chunk_elements(group().pipelining, recv_.dtype, recv_.count);
    lanes_ = lanes_for(recv_.count, chunk_);
    window_ = std::min(group().pipelining.depth, lanes_);
    scratch_ = scratch(static_cast<std::size_t>(2 * window_ * chunk_) * element_);
    for (int s = 0; s < window_; ++s) slot_transfers_.push_back({&transfer(), &transfer()});
  }
  int lane_count() const override { return lanes_; }
  int window() const override { return window_; }

  Task lane(int index, int slot) override {
    const int n = size();
    const int r = rank();
    const int right = mod(r + 1, n);
    const int left = mod(r - 1, n);
    Transfer& out = *slot_transfers_[slot].out;
    Transfer& in = *slot_transfers_[slot].in;
    std::byte* partial = scratch_.get() + static_cast<std::size_t>(2 * slot * chunk_) * element_;
    std::byte* arriving = partial + static_cast<std::size_t>(chunk_) * element_;
    const std::byte* own = static_cast<const std::byte*>(send_.data);
    const Range piece = chunk({0, recv_.count}, chunk_, index);
    const std::size_t bytes = static_cast<std::size_t>(piece.count) * element_;
    auto own_piece = [&](int seg) { return own + (seg * recv_.count + piece.first) * static_cast<std::int64_t>(element_); };

    // Step 0 sends this rank's own contribution; later steps forward the
    // partial sum that just arrived, combined with this rank's.
    send(out, right, index, own_piece(mod(r - 1, n)), bytes);
    recv(in, left, index, partial, bytes);
    co_await all_of(out, in);
    combine_.apply(partial, own_piece(mod(r - 2, n)), piece.count);
    for (int s = 1; s < n - 1; ++s) {
      send(out, right, index, partial, bytes);
      recv(in, left, index, arriving, bytes);
      co_await all_of(out, in);
      combine_.apply(arriving, own_piece(mod(r - s - 2, n)), piece.count);
      std::swap(partial, arriving);
    }
    std::byte* result = bytes_of(recv_) + piece.first * static_cast<std::int64_t>(element_);
    std::memcpy(result, partial, bytes);
    combine_.finish(result, piece.count, n);
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  const Combine combine_;
  std::int64_t chunk_ = 1;
  int lanes_ = 0;
  int window_ = 1;
  std::size_t element_ = 1;
  Scratch scratch_;
  std::vector<SlotTransfers> slot_transfers_;
};

// Rank r's block goes to slot r of recv first; then each lane passes chunk
// i of the blocks around the ring, straight into their final place.
class RingAllgather final : public Operation {
 public:
  RingAllgather(const TensorView& send, const TensorView& recv)
      : Operation("allgather", Kind::collective), send_(send), recv_(recv) {}

 protected:
  void prepare() override {
    element_ = dtype_size(recv_.dtype);
    block_ = send_.count;
    if (block_ == 0) return;
    // In place (send at the start of recv), the block moves to its slot
    // before anything arrives there.
    std::byte* mine = bytes_of(recv_) + rank() * block_ * static_cast<std::int64_t>(element_);
    if (mine != send_.data) std::memmove(mine, send_.data, send_.bytes());
    if (size() == 1) return;
    chunk_ = chunk_elements(group().pipelining, recv_.dtype, block_);
    lanes_ = lanes_for(block_, chunk_);
    window_ = std::min(group().pipelining.depth, lanes_);
    for (int s = 0; s < window_; ++s) slot_transfers_.push_back({&transfer(), &transfer()});
  }
  int lane_count() const override { return lanes_; }
  int window() const override { return window_; }

  Task lane(int index, int slot) override {
    const int n = size();
    const int r = rank();
    Transfer& out = *slot_transfers_[slot].out;
    Transfer& in = *slot_transfers_[slot].in;
    const Range piece = chunk({0, block_}, chunk_, index);
    const std::size_t bytes = static_cast<std::size_t>(piece.count) * element_;
    auto at = [&](int block) {
      return bytes_of(recv_) + (block * block_ + piece.first) * static_cast<std::int64_t>(element_);
    };
    for (int s = 0; s < n - 1; ++s) {
      send(out, mod(r + 1, n), index, at(mod(r - s, n)), bytes);
      recv(in, mod(r - 1, n), index, at(mod(r - s - 1, n)), bytes);
      co_await all_of(out, in);
    }
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  std::int64_t block_ = 0;
  std::int64_t chunk_ = 1;
  int lanes_ = 0;
  int window_ = 1;
  std::size_t element_ = 1;
  std::vector<SlotTransfers> slot_transfers_;
};

}  // namespace

std::unique_ptr<Operation> ring_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) {
  return std::make_unique<RingAllreduce>(send, recv, op);
}

std::unique_ptr<Operation> ring_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) {
  return std::make_unique<RingReduceScatter>(send, recv, op);
}

std::unique_ptr<Operation> ring_allgather(const TensorView& send, const TensorView& recv) {
  return std::make_unique<RingAllgather>(send, recv);
}

}  // namespace dtrain::comm::schedule
