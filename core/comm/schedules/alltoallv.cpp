#include <cstring>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/chunks.hpp"

namespace dtrain::comm::schedule {

namespace {

// Pairwise exchange: in step i rank r sends its block for r + i and receives
// the block from r - i, a window of steps at a time. Blocks are packed in
// rank order. Every pair exchanges a message, empty ones included, so a rank
// that expects data its peer does not send is told rather than left waiting.
class PairwiseAlltoallv final : public Operation {
 public:
  PairwiseAlltoallv(const TensorView& send, std::vector<std::int64_t> send_counts, const TensorView& recv,
                    std::vector<std::int64_t> recv_counts)
      : Operation("alltoallv", Kind::collective),
        send_(send),
        recv_(recv),
        send_counts_(std::move(send_counts)),
        recv_counts_(std::move(recv_counts)) {}

 protected:
  void prepare() override {
    const int n = size();
    element_ = dtype_size(recv_.dtype);
    send_first_.assign(n, 0);
    recv_first_.assign(n, 0);
    for (int p = 1; p < n; ++p) {
      send_first_[p] = send_first_[p - 1] + send_counts_[p - 1];
      recv_first_[p] = recv_first_[p - 1] + recv_counts_[p - 1];
    }
    source_ = static_cast<const std::byte*>(send_.data);
    if (send_.data == recv_.data && send_.count > 0) {
      // In place: the blocks to send are kept aside before any arrives.
      copy_.assign(source_, source_ + send_.bytes());
      source_ = copy_.data();
    }
    const int r = rank();
    const std::int64_t own = std::min(send_counts_[r], recv_counts_[r]);
    if (own > 0) {
      std::memmove(static_cast<std::byte*>(recv_.data) + recv_first_[r] * static_cast<std::int64_t>(element_),
                   source_ + send_first_[r] * static_cast<std::int64_t>(element_),
                   static_cast<std::size_t>(own) * element_);
    }
    window_ = std::max(1, std::min(n - 1, 2 * group().pipelining.depth));
    for (int s = 0; s < window_; ++s) {
      outs_.push_back(&transfer());
      ins_.push_back(&transfer());
    }
  }
  int lane_count() const override { return size() - 1; }
  int window() const override { return window_; }

  Task lane(int index, int slot) override {
    const int n = size();
    const int to = mod(rank() + index + 1, n);
    const int from = mod(rank() - index - 1, n);
    const auto at = [this](std::int64_t first) { return first * static_cast<std::int64_t>(element_); };
    send(*outs_[slot], to, 0, source_ + at(send_first_[to]), static_cast<std::size_t>(at(send_counts_[to])));
    recv(*ins_[slot], from, 0, static_cast<std::byte*>(recv_.data) + at(recv_first_[from]),
         static_cast<std::size_t>(at(recv_counts_[from])));
    co_await all_of(*outs_[slot], *ins_[slot]);
  }

  void finish() override {
    const int r = rank();
    if (send_counts_[r] != recv_counts_[r]) {
      raise(DT_ERR_MISMATCH, "this rank sends " + std::to_string(send_counts_[r]) +
                                 " elements to itself but expects to receive " + std::to_string(recv_counts_[r]));
    }
  }

 private:
  const TensorView send_;
  const TensorView recv_;
  const std::vector<std::int64_t> send_counts_;
  const std::vector<std::int64_t> recv_counts_;
  std::vector<std::int64_t> send_first_;
  std::vector<std::int64_t> recv_first_;
  std::size_t element_ = 1;
  const std::byte* source_ = nullptr;
  std::vector<std::byte> copy_;
  int window_ = 1;
  std::vector<Transfer*> outs_;
  std::vector<Transfer*> ins_;
};

}  // namespace

std::unique_ptr<Operation> pairwise_alltoallv(const TensorView& send, const std::vector<std::int64_t>& send_counts,
                                              const TensorView& recv, const std::vector<std::int64_t>& recv_counts) {
  return std::make_unique<PairwiseAlltoallv>(send, send_counts, recv, recv_counts);
}

}  // namespace dtrain::comm::schedule
