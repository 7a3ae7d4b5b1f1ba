#include <vector>

#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/chunks.hpp"

namespace dtrain::comm::schedule {

namespace {

// Binomial tree: in ceil(log2 n) rounds every rank that has the data passes
// it to the rank 2^k further along (counted from the root).
class TreeBroadcast final : public Operation {
 public:
  TreeBroadcast(const TensorView& buf, int root) : Operation("broadcast", Kind::collective), buf_(buf), root_(root) {}

 protected:
  int lane_count() const override { return size() > 1 && buf_.count > 0 ? 1 : 0; }

  Task lane(int, int) override {
    const int n = size();
    const int r = rank();
    const int relative = mod(r - root_, n);
    const std::size_t bytes = buf_.bytes();
    int mask = 1;
    for (; mask < n; mask <<= 1) {
      if (relative & mask) {
        Transfer& in = transfer();
        recv(in, mod(r - mask, n), 0, buf_.data, bytes);
        co_await all_of(in);
        break;
      }
    }
    std::vector<Transfer*> outs;
    for (mask >>= 1; mask > 0; mask >>= 1) {
      if (relative + mask < n) {
        Transfer& out = transfer();
        send(out, mod(r + mask, n), 0, buf_.data, bytes);
        outs.push_back(&out);
      }
    }
    co_await all_of(outs);
  }

 private:
  const TensorView buf_;
  const int root_;
};

// A chain from the root, cut into chunks: each rank forwards chunk i to the
// next while chunk i + 1 arrives, so the time approaches one buffer transfer
// plus n - 1 chunk transfers.
class PipelineBroadcast final : public Operation {
 public:
  PipelineBroadcast(const TensorView& buf, int root)
      : Operation("broadcast", Kind::collective), buf_(buf), root_(root) {}

 protected:
  void prepare() override {
    if (size() == 1 || buf_.count == 0) return;
    element_ = dtype_size(buf_.dtype);
    chunk_ = chunk_elements(group().pipelining, buf_.dtype, buf_.count);
    lanes_ = lanes_for(buf_.count, chunk_);
    window_ = std::min(group().pipelining.depth, lanes_);
    for (int s = 0; s < window_; ++s) {
      ins_.push_back(&transfer());
      outs_.push_back(&transfer());
    }
  }
  int lane_count() const override { return lanes_; }
  int window() const override { return window_; }

  Task lane(int index, int slot) override {
    const int n = size();
    const int relative = mod(rank() - root_, n);
    const Range piece = chunk({0, buf_.count}, chunk_, index);
    std::byte* data = static_cast<std::byte*>(buf_.data) + piece.first * static_cast<std::int64_t>(element_);
    const std::size_t bytes = static_cast<std::size_t>(piece.count) * element_;
    if (relative > 0) {
      recv(*ins_[slot], mod(rank() - 1, n), index, data, bytes);
      co_await all_of(*ins_[slot]);
    }
    if (relative < n - 1) {
      send(*outs_[slot], mod(rank() + 1, n), index, data, bytes);
      co_await all_of(*outs_[slot]);
    }
  }

 private:
  const TensorView buf_;
  const int root_;
  std::size_t element_ = 1;
  std::int64_t chunk_ = 1;
  int lanes_ = 0;
  int window_ = 1;
  std::vector<Transfer*> ins_;
  std::vector<Transfer*> outs_;
};

}  // namespace

std::unique_ptr<Operation> tree_broadcast(const TensorView& buf, int root) {
  return std::make_unique<TreeBroadcast>(buf, root);
}

std::unique_ptr<Operation> pipeline_broadcast(const TensorView& buf, int root) {
  return std::make_unique<PipelineBroadcast>(buf, root);
}

}  // namespace dtrain::comm::schedule
