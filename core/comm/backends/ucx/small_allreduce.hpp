// A small allreduce over UCX messages that a caller waits for at once
// (immediate_collective.hpp). It is recursive doubling on a power-of-two
// world (no fold needed), with the tags, steps and message order of the
// doubling rounds in recursive.cpp, so ranks that take this path and ranks
// that run the Operation still match.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/tensor.hpp"
#include "comm/backends/ucx/group.hpp"
#include "comm/backends/ucx/immediate_collective.hpp"
#include "comm/reduce_op.hpp"
#include "comm/schedules/combine.hpp"

namespace dtrain::comm::ucx {

class SmallAllreduce final : public ImmediateCollective {
 public:
  // The largest buffer it takes: its peers' values arrive within it.
  static constexpr std::size_t kMaxBytes = 32 * 1024;

  // Whether an allreduce of `bytes` on `size` ranks fits.
  static bool fits(int size, std::size_t bytes) {
    return size > 1 && (size & (size - 1)) == 0 && bytes > 0 && bytes <= kMaxBytes;
  }

  // Posts the first round.
  void start(const Group& group, std::uint64_t sequence, const Collective& allreduce) override;
  // Reduces what arrived and posts the next round. Over once done, or once
  // a transfer failed.
  Progress advance() override;
  Outcome outcome() const override;
  bool quiescent() const override { return !out_.pending() && !in_.pending(); }
  bool involves(int peer) const override {
    return (out_.pending() && out_.peer == peer) || (in_.pending() && in_.peer == peer);
  }
  // The peer of the round in flight, receiving first.
  int waiting_on() const override;
  // Cancels the pending receive.
  int cancel(Transport& transport) override;
  bool polled() const override { return false; }

 private:
  void post();

  Group group_;
  std::uint64_t sequence_ = 0;
  Combine combine_{ReduceOp::sum, DType::f32};
  std::int64_t count_ = 0;
  std::size_t bytes_ = 0;
  const std::byte* mine_ = nullptr;  // the send buffer, then the partial result
  std::byte* work_ = nullptr;        // the receive buffer, where the result is made
  int mask_ = 1;
  std::uint32_t step_ = 1;
  Transfer out_;
  Transfer in_;
  const Transfer* failure_ = nullptr;
  alignas(64) std::byte incoming_[kMaxBytes];
};

}  // namespace dtrain::comm::ucx
