// Latency-bound schedules: about log2(n) rounds whatever the world size.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/chunks.hpp"
#include "comm/schedules/combine.hpp"
#include "comm/schedules/fold.hpp"

namespace dtrain::comm::schedule {

namespace {

// Allreduce by pairwise exchanges over a buffer every rank ends up holding
// in full, the ranks of a world that is not a power of two folded in first
// (fold.hpp). Every rank computes its values as `mine op theirs` with
// commutative operators, so all ranks end with bitwise identical results.
//
// Recursive doubling exchanges the whole buffer in each of log2(n) rounds.
// Halving-doubling (Rabenseifner) is a reduce-scatter whose rounds halve
// the part each rank exchanges and reduces, until each holds one reduced
// block, then an allgather doubling it back: twice the rounds, but each rank
// sends and reduces about the buffer once rather than log2(n) times.
class Butterfly final : public Operation {
 public:
  enum class Rounds { doubling, halving_doubling };

  // reduce_scatter (doubling only): `send` holds size x recv.count elements,
  // and rank r keeps block r of the reduced whole.
  Butterfly(const TensorView& send, const TensorView& recv, ReduceOp op, Rounds rounds, bool scatter)
      : Operation(scatter ? "reduce_scatter" : "allreduce", Kind::collective),
        send_(send),
        recv_(recv),
        combine_(op, recv.dtype),
        rounds_(rounds),
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
    const Fold fold(size());
    const int r = rank();
    const std::size_t bytes = static_cast<std::size_t>(count_) * element_;
    Transfer& out = transfer();
    Transfer& in = transfer();
    // This rank's values: its contribution until the first reduction, then
    // the partial result in work_.
    const std::byte* mine = source_;

    if (fold.sits_out(r)) {
      send(out, r + 1, kFoldStep, mine, bytes);
      co_await all_of(out);
      recv(in, r + 1, kUnfoldStep, work_, bytes);
      co_await all_of(in);
      co_return;
    }
    if (fold.folded(r)) {
      recv(in, r - 1, kFoldStep, incoming_, bytes);
      co_await all_of(in);
      combine_.apply(work_, mine, incoming_, count_);
      mine = work_;
    }
    // Each round posts its receive before its send, so that the peer's
    // message finds it waiting rather than queueing as unexpected.
    const int vrank = fold.vrank(r);
    std::uint32_t step = 1;
    if (rounds_ == Rounds::doubling) {
      for (int mask = 1; mask < fold.pof2; mask <<= 1, ++step) {
        const int peer = fold.rank(vrank ^ mask);
        recv(in, peer, step, incoming_, bytes);
        send(out, peer, step, mine, bytes);
        co_await all_of(out, in);
        combine_.apply(work_, mine, incoming_, count_);
        mine = work_;
      }
    } else {
      // Blocks [lo, hi) of pof2 near-equal ones are this rank's to reduce;
      // each round it keeps one half and hands the peer the other.
      auto at = [&](int block) { return static_cast<std::size_t>(segment(count_, fold.pof2, block).first); };
      int lo = 0;
      int hi = fold.pof2;
      for (int mask = fold.pof2 / 2; mask > 0; mask >>= 1, ++step) {
        const int peer = fold.rank(vrank ^ mask);
        const bool upper = (vrank & mask) != 0;
        const int give = upper ? lo : lo + mask;
        if (upper) lo += mask; else hi -= mask;
        const std::size_t kept = at(hi) - at(lo);
        recv(in, peer, step, incoming_, kept * element_);
        send(out, peer, step, mine + at(give) * element_, (at(give + mask) - at(give)) * element_);
        co_await all_of(out, in);
        combine_.apply(work_ + at(lo) * element_, mine + at(lo) * element_, incoming_, static_cast<std::int64_t>(kept));
        mine = work_;
      }
      // The allgather: each round the peer holds the reduced blocks next to these.
      for (int mask = 1; mask < fold.pof2; mask <<= 1, ++step) {
        const int peer = fold.rank(vrank ^ mask);
        const int theirs = (vrank & mask) != 0 ? lo - mask : hi;
        recv(in, peer, step, work_ + at(theirs) * element_, (at(theirs + mask) - at(theirs)) * element_);
        send(out, peer, step, work_ + at(lo) * element_, (at(hi) - at(lo)) * element_);
        co_await all_of(out, in);
        lo = std::min(lo, theirs);
        hi = std::max(hi, theirs + mask);
      }
    }
    if (fold.folded(r)) {
      send(out, r - 1, kUnfoldStep, work_, bytes);
      co_await all_of(out);
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
  const Rounds rounds_;
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
  return std::make_unique<Butterfly>(send, recv, op, Butterfly::Rounds::doubling, false);
}

std::unique_ptr<Operation> halving_doubling_allreduce(const TensorView& send, const TensorView& recv, ReduceOp op) {
  return std::make_unique<Butterfly>(send, recv, op, Butterfly::Rounds::halving_doubling, false);
}

std::unique_ptr<Operation> recursive_reduce_scatter(const TensorView& send, const TensorView& recv, ReduceOp op) {
  return std::make_unique<Butterfly>(send, recv, op, Butterfly::Rounds::doubling, true);
}

std::unique_ptr<Operation> bruck_allgather(const TensorView& send, const TensorView& recv) {
  return std::make_unique<BruckAllgather>(send, recv);
}

}  // namespace dtrain::comm::schedule
