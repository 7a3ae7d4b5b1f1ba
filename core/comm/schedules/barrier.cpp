#include <vector>

#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/chunks.hpp"

namespace dtrain::comm::schedule {

namespace {

// Dissemination barrier: in round k rank r signals r + 2^k and waits for
// r - 2^k; after ceil(log2 n) rounds every rank has heard, directly or not,
// from every other.
class DisseminationBarrier final : public Operation {
 public:
  DisseminationBarrier() : Operation("barrier", Kind::collective) {}

 protected:
  int lane_count() const override { return size() > 1 ? 1 : 0; }

  Task lane(int, int) override {
    const int n = size();
    Transfer& out = transfer();
    Transfer& in = transfer();
    std::uint32_t step = 0;
    for (int distance = 1; distance < n; distance <<= 1, ++step) {
      send(out, mod(rank() + distance, n), step, nullptr, 0);
      recv(in, mod(rank() - distance, n), step, nullptr, 0);
      co_await all_of(out, in);
    }
  }
};

// Every pair of ranks exchanges an empty message, all at once: each endpoint
// gets wired up, and a rank that never shows up is named.
class Handshake final : public Operation {
 public:
  Handshake() : Operation("connect", Kind::collective) {}

 protected:
  int lane_count() const override { return size() > 1 ? 1 : 0; }

  Task lane(int, int) override {
    std::vector<Transfer*> all;
    for (int i = 1; i < size(); ++i) {
      Transfer& out = transfer();
      Transfer& in = transfer();
      send(out, mod(rank() + i, size()), 0, nullptr, 0);
      recv(in, mod(rank() - i, size()), 0, nullptr, 0);
      all.push_back(&out);
      all.push_back(&in);
    }
    co_await all_of(all);
  }
};

}  // namespace

std::unique_ptr<Operation> dissemination_barrier() { return std::make_unique<DisseminationBarrier>(); }

std::unique_ptr<Operation> handshake() { return std::make_unique<Handshake>(); }

}  // namespace dtrain::comm::schedule
