// Latency-bound schedules: about log2(n) rounds whatever the world size.

#include <bit>
#include <cstddef>
#include <cstring>
#include <vector>

#include "comm/backends/ucx/algorithms.hpp"
#include "comm/backends/ucx/chunks.hpp"
#include "comm/backends/ucx/combine.hpp"

namespace dtrain::comm::ucx {

namespace {

constexpr std::uint32_t kFoldStep = 0;
constexpr std::uint32_t kUnfoldStep = kStepLimit - 1;

// Recursive doubling over a buffer every rank ends up holding in full. For a
// world that is not a power of two, the first 2 * rem ranks pair up
// beforehand: each even one hands its data to its odd neighbour and sits out
// the rounds, then receives the result (MPICH's fix-up). Every rank computes
// its values as `mine op theirs` with commutative operators, so all ranks end
// with bitwise identical results.
class RecursiveDoubling final : public Operation {
 public:
  // reduce_scatter: `send` holds size x recv.count elements, and rank r keeps
  // block r of the reduced whole.
  RecursiveDoubling(const TensorView& send, const TensorView& recv, ReduceOp op, bool scatter)
      : Operation(scatter ? "reduce_scatter" : "allreduce", Kind::collective),
        send_(send),
        recv_(recv),
        combine_(op, recv.dtype),
        scatter_(scatter) {}

 protected:
  void prepare() override {
    element_ = dtype_size(recv_.dtype);
    if (scatter_) {
      // The whole vector is reduced in scratch space; `send` stays untouched
      // (and may share memory with recv).
      owned_.assign(static_cast<const std::byte*>(send_.data), static_cast<const std::byte*>(send_.data) + send_.bytes());
      work_ = owned_.data();
      source_ = work_;
      count_ = send_.count;
    } else {
      // `send` is read where it is until the first reduction writes recv.
      work_ = static_cast<std::byte*>(recv_.data);
      source_ = static_cast<const std::byte*>(send_.data);
      count_ = recv_.count;
      if (size() == 1 && send_.data != recv_.data && count_ > 0) std::memcpy(recv_.data, send_.data, recv_.bytes());
    }
    const std::size_t bytes = static_cast<std::size_t>(count_) * element_;
    if (size() > 1 && count_ > 0) {
      if (bytes <= sizeof small_incoming_) {
        incoming_ = small_incoming_;
      } else {
        incoming_storage_ = scratch(bytes);
        incoming_ = incoming_storage_.get();
      }
    }
  }
  int lane_count() const override { return size() > 1 && count_ > 0 ? 1 : 0; }

  Task lane(int, int) override {
    const int n = size();
    const int r = rank();
    const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
    const int rem = n - pof2;
    const std::size_t bytes = static_cast<std::size_t>(count_) * element_;
    Transfer& out = transfer();
    Transfer& in = transfer();
    // This rank's values: its contribution until the first reduction, then
    // the partial result in work_.
    const std::byte* mine = source_;

    int vrank = r - rem;
    if (r < 2 * rem) {
      if (r % 2 == 0) {
        send(out, r + 1, kFoldStep, mine, bytes);
        co_await all_of(out);
        vrank = -1;
      } else {
        recv(in, r - 1, kFoldStep, incoming_, bytes);
        co_await all_of(in);
        combine_.apply(work_, mine, incoming_, count_);
        mine = work_;
        vrank = r / 2;
      }
    }
    if (vrank >= 0) {
      std::uint32_t step = 1;
      for (int mask = 1; mask < pof2; mask <<= 1, ++step) {
        const int vpeer = vrank ^ mask;
        const int peer = vpeer < rem ? vpeer * 2 + 1 : vpeer + rem;
        send(out, peer, step, mine, bytes);
        recv(in, peer, step, incoming_, bytes);
        co_await all_of(out, in);
        combine_.apply(work_, mine, incoming_, count_);
        mine = work_;
      }
    }
    if (r < 2 * rem) {
      if (r % 2 == 1) {
        send(out, r - 1, kUnfoldStep, work_, bytes);
        co_await all_of(out);
      } else {
        recv(in, r + 1, kUnfoldStep, work_, bytes);
        co_await all_of(in);
      }
    }
  }

  void finish() override {
    if (scatter_) {
      if (recv_.count > 0) {
        std::memcpy(recv_.data, work_ + rank() * recv_.count * static_cast<std::int64_t>(element_), recv_.bytes());
      }
      combine_.finish(recv_.data, recv_.count, size());
    } else {
      combine_.finish(work_, count_, size());
    }
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  const Combine combine_;
  const bool scatter_;
  std::size_t element_ = 1;
  std::byte* work_ = nullptr;           // where the result is made
  const std::byte* source_ = nullptr;  // this rank's contribution
  std::int64_t count_ = 0;
  std::vector<std::byte> owned_;
  // Where the peer's values arrive: within the operation for small vectors,
  // which then need no allocation.
  std::byte* incoming_ = nullptr;
  Scratch incoming_storage_;
  alignas(std::max_align_t) std::byte small_incoming_[64];
};

// Bruck's allgather: in round k every rank sends the blocks it has gathered
// so far to rank r - 2^k and receives as many from r + 2^k, so after
// ceil(log2 n) rounds scratch block i holds rank (r + i)'s data; a final
// rotation puts each block in its place.
class BruckAllgather final : public Operation {
 public:
  BruckAllgather(const TensorView& send, const TensorView& recv)
      : Operation("allgather", Kind::collective), send_(send), recv_(recv) {}

 protected:
  void prepare() override {
    block_ = send_.bytes();
    gathered_.resize(block_ * static_cast<std::size_t>(size()));
    if (block_ > 0) std::memcpy(gathered_.data(), send_.data, block_);
  }
  int lane_count() const override { return size() > 1 && block_ > 0 ? 1 : 0; }

  Task lane(int, int) override {
    const int n = size();
    const int r = rank();
    Transfer& out = transfer();
    Transfer& in = transfer();
    std::uint32_t step = 0;
    for (int distance = 1; distance < n; distance <<= 1, ++step) {
      const std::size_t blocks = static_cast<std::size_t>(std::min(distance, n - distance));
      send(out, mod(r - distance, n), step, gathered_.data(), blocks * block_);
      recv(in, mod(r + distance, n), step, gathered_.data() + static_cast<std::size_t>(distance) * block_,
           blocks * block_);
      co_await all_of(out, in);
    }
  }

  void finish() override {
    if (block_ == 0) return;
    auto* out = static_cast<std::byte*>(recv_.data);
    for (int i = 0; i < size(); ++i) {
      std::memcpy(out + static_cast<std::size_t>(mod(rank() + i, size())) * block_,
                  gathered_.data() + static_cast<std::size_t>(i) * block_, block_);
    }
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  std::size_t block_ = 0;
  std::vector<std::byte> gathered_;
};

}  // namespace

std::unique_ptr<Operation> recursive_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) {
  return std::make_unique<RecursiveDoubling>(send, recv, op, false);
}

std::unique_ptr<Operation> recursive_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) {
  return std::make_unique<RecursiveDoubling>(send, recv, op, true);
}

std::unique_ptr<Operation> bruck_allgather(const TensorView& send, const TensorView& recv) {
  return std::make_unique<BruckAllgather>(send, recv);
}

}  // namespace dtrain::comm::ucx
