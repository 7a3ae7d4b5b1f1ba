// The collectives' schedules (comm/schedules/) over a transport that is not
// UCX: an in-process loopback that matches tagged messages between ranks
// simulated in one thread. Each schedule must give the reference result
// there as it does over UCP, and report a short message or a lost peer as
// it does there, which shows that the schedules depend on the Messages
// interface alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "comm/schedules/algorithms.hpp"
#include "comm/schedules/messages.hpp"
#include "comm/schedules/operation.hpp"

namespace dtrain::comm::schedule {
namespace {

// What the simulated ranks share: receives posted at each rank and messages
// that arrived before their receive (every send is buffered, so it
// completes at once, as an eager send does).
struct Wire {
  struct Posted {
    Transfer* transfer;
    int source;
    Tag tag;
    void* data;
  };
  struct Unexpected {
    int source;
    Tag tag;
    std::vector<std::byte> data;
  };
  explicit Wire(int ranks) : posted(ranks), unexpected(ranks) {}
  std::vector<std::deque<Posted>> posted;
  std::vector<std::deque<Unexpected>> unexpected;
  std::set<int> dead;
};

class Loopback final : public Messages {
 public:
  Loopback(Wire& wire, int rank) : wire_(wire), rank_(rank) {}

  void send(Transfer& t, int peer, Tag tag, const void* data, std::size_t bytes) override {
    begin(t, peer, false, bytes);
    if (gone(peer)) return end(t, MessageStatus::lost);
    auto& posted = wire_.posted[peer];
    const auto match = std::find_if(posted.begin(), posted.end(),
                                    [&](const Wire::Posted& p) { return p.source == rank_ && p.tag == tag; });
    if (match != posted.end()) {
      const Wire::Posted receive = *match;
      posted.erase(match);
      deliver(*receive.transfer, receive.data, data, bytes);
    } else {
      const auto* from = static_cast<const std::byte*>(data);
      wire_.unexpected[peer].push_back({rank_, tag, std::vector<std::byte>(from, from + bytes)});
    }
    end(t, MessageStatus::ok);
  }

  void recv(Transfer& t, int peer, Tag tag, void* data, std::size_t bytes) override {
    begin(t, peer, true, bytes);
    auto& waiting = wire_.unexpected[rank_];
    const auto match = std::find_if(waiting.begin(), waiting.end(),
                                    [&](const Wire::Unexpected& u) { return u.source == peer && u.tag == tag; });
    if (match != waiting.end()) {
      const std::vector<std::byte> message = std::move(match->data);
      waiting.erase(match);
      return deliver(t, data, message.data(), message.size());
    }
    if (gone(peer)) return end(t, MessageStatus::lost);
    wire_.posted[rank_].push_back({&t, peer, tag, data});
  }

  void cancel(Transfer& t) override {
    auto& posted = wire_.posted[rank_];
    const auto match =
        std::find_if(posted.begin(), posted.end(), [&](const Wire::Posted& p) { return p.transfer == &t; });
    if (match == posted.end()) return;
    posted.erase(match);
    end(t, MessageStatus::lost);
  }

  bool gone(int peer) const override { return wire_.dead.count(peer) != 0; }
  std::string loss(int, std::int32_t) const override { return "failed (it left the loopback)"; }

 private:
  static void begin(Transfer& t, int peer, bool receive, std::size_t bytes) {
    t.peer = peer;
    t.receive = receive;
    t.bytes = bytes;
    t.received = 0;
    t.in_flight = true;
  }
  static void end(Transfer& t, MessageStatus status) {
    t.in_flight = false;
    t.status = status;
    if (status != MessageStatus::ok && t.owner != nullptr) t.owner->transfer_failed(t);
  }
  static void deliver(Transfer& t, void* into, const void* from, std::size_t bytes) {
    const std::size_t copied = std::min(bytes, t.bytes);
    if (copied > 0) std::memcpy(into, from, copied);  // an empty message may have no data
    t.received = bytes;
    end(t, bytes == t.bytes ? MessageStatus::ok : MessageStatus::truncated);
  }

  Wire& wire_;
  const int rank_;
};

using Make = std::function<std::unique_ptr<Operation>(int rank)>;

struct Outcome {
  dt_status status;
  std::string message;
};

// Runs one operation per rank, each over its own loopback, in one thread
// until every one is over; small chunks, so pipelined schedules run many
// lanes through their windows.
std::vector<Outcome> run(int ranks, const Make& make, const std::set<int>& dead = {}) {
  Wire wire(ranks);
  wire.dead = dead;
  std::vector<std::unique_ptr<Loopback>> transports;
  std::vector<std::unique_ptr<Operation>> ops;
  for (int r = 0; r < ranks; ++r) {
    transports.push_back(std::make_unique<Loopback>(wire, r));
    if (dead.count(r) != 0) {
      ops.push_back(nullptr);
      continue;
    }
    Group group;
    group.messages = transports.back().get();
    group.rank = r;
    group.size = ranks;
    group.context = 1;
    group.pipelining = {64, 3};
    ops.push_back(make(r));
    ops.back()->set_label(1, 0);
    ops.back()->bind(group);
  }
  for (auto& op : ops) {
    if (op) op->start();
  }
  auto all_over = [&] { return std::all_of(ops.begin(), ops.end(), [](const auto& op) { return !op || op->over(); }); };
  for (int round = 0; round < 100000 && !all_over(); ++round) {
    for (auto& op : ops) {
      if (op) op->advance();
    }
  }
  EXPECT_TRUE(all_over()) << "the schedule did not finish on the loopback";
  std::vector<Outcome> outcomes;
  for (auto& op : ops) {
    outcomes.push_back(op ? Outcome{op->request()->status(), op->request()->message()} : Outcome{DT_OK, "dead"});
  }
  return outcomes;
}

void expect_ok(const std::vector<Outcome>& outcomes) {
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    EXPECT_EQ(outcomes[r].status, DT_OK) << "rank " << r << ": " << outcomes[r].message;
  }
}

// Rank r's element i: distinct small integers, so any order of the sums is exact.
double value(int rank, std::int64_t i) { return static_cast<double>(rank * 1000 + i % 97); }

TensorView f64(std::vector<double>& v) { return host_view(v.data(), static_cast<std::int64_t>(v.size()), DType::f64); }

using Allreduce = std::unique_ptr<Operation> (*)(const TensorView&, const TensorView&, ReduceOp);

class Schedules : public ::testing::TestWithParam<int> {};

TEST_P(Schedules, EveryAllreduceScheduleSumsAndTakesTheMaximum) {
  const int n = GetParam();
  const std::int64_t count = 301;  // not a multiple of any world size here
  for (Allreduce schedule : {&ring_allreduce, &recursive_allreduce, &halving_doubling_allreduce}) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
      std::vector<std::vector<double>> send(n, std::vector<double>(count));
      std::vector<std::vector<double>> recv(n, std::vector<double>(count));
      for (int r = 0; r < n; ++r) {
        for (std::int64_t i = 0; i < count; ++i) send[r][i] = value(r, i);
      }
      expect_ok(run(n, [&](int r) { return schedule(f64(send[r]), f64(recv[r]), op); }));
      for (int r = 0; r < n; ++r) {
        for (std::int64_t i = 0; i < count; ++i) {
          double expected = op == ReduceOp::max ? value(n - 1, i) : 0.0;
          for (int s = 0; op == ReduceOp::sum && s < n; ++s) expected += value(s, i);
          ASSERT_EQ(recv[r][i], expected) << "rank " << r << " element " << i;
        }
      }
    }
  }
}

TEST_P(Schedules, ReduceScatterAndAllgatherSchedulesGiveEachRankItsPart) {
  const int n = GetParam();
  const std::int64_t block = 37;
  for (auto schedule : {&ring_reduce_scatter, &recursive_reduce_scatter}) {
    std::vector<std::vector<double>> send(n, std::vector<double>(block * n));
    std::vector<std::vector<double>> recv(n, std::vector<double>(block));
    for (int r = 0; r < n; ++r) {
      for (std::int64_t i = 0; i < block * n; ++i) send[r][i] = value(r, i);
    }
    expect_ok(run(n, [&](int r) { return schedule(f64(send[r]), f64(recv[r]), ReduceOp::sum); }));
    for (int r = 0; r < n; ++r) {
      for (std::int64_t i = 0; i < block; ++i) {
        double expected = 0.0;
        for (int s = 0; s < n; ++s) expected += value(s, r * block + i);
        ASSERT_EQ(recv[r][i], expected) << "reduce-scatter, rank " << r << " element " << i;
      }
    }
  }
  for (auto schedule : {&ring_allgather, &bruck_allgather}) {
    std::vector<std::vector<double>> send(n, std::vector<double>(block));
    std::vector<std::vector<double>> recv(n, std::vector<double>(block * n));
    for (int r = 0; r < n; ++r) {
      for (std::int64_t i = 0; i < block; ++i) send[r][i] = value(r, i);
    }
    expect_ok(run(n, [&](int r) { return schedule(f64(send[r]), f64(recv[r])); }));
    for (int r = 0; r < n; ++r) {
      for (std::int64_t i = 0; i < block * n; ++i) {
        ASSERT_EQ(recv[r][i], value(static_cast<int>(i / block), i % block)) << "allgather, rank " << r;
      }
    }
  }
}

TEST_P(Schedules, BroadcastFromEveryRootAndUnevenAlltoallv) {
  const int n = GetParam();
  for (auto schedule : {&tree_broadcast, &pipeline_broadcast}) {
    for (int root = 0; root < n; ++root) {
      std::vector<std::vector<double>> buf(n, std::vector<double>(200));
      for (std::int64_t i = 0; i < 200; ++i) buf[root][i] = value(root, i);
      expect_ok(run(n, [&](int r) { return schedule(f64(buf[r]), root); }));
      for (int r = 0; r < n; ++r) ASSERT_EQ(buf[r], buf[root]) << "root " << root << ", rank " << r;
    }
  }
  // Rank s sends (s + d) % 3 * 5 elements to rank d: zeros included.
  auto elements = [](int s, int d) { return static_cast<std::int64_t>((s + d) % 3 * 5); };
  std::vector<std::vector<std::int64_t>> send_counts(n), recv_counts(n);
  std::vector<std::vector<double>> send(n), recv(n);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      send_counts[r].push_back(elements(r, p));
      recv_counts[r].push_back(elements(p, r));
      for (std::int64_t i = 0; i < elements(r, p); ++i) send[r].push_back(value(r, p * 100 + i));
    }
    recv[r].assign(std::accumulate(recv_counts[r].begin(), recv_counts[r].end(), std::size_t{0}), -1.0);
  }
  expect_ok(run(n, [&](int r) { return pairwise_alltoallv(f64(send[r]), send_counts[r], f64(recv[r]), recv_counts[r]); }));
  for (int r = 0; r < n; ++r) {
    std::vector<double> expected;
    for (int s = 0; s < n; ++s) {
      for (std::int64_t i = 0; i < elements(s, r); ++i) expected.push_back(value(s, r * 100 + i));
    }
    ASSERT_EQ(recv[r], expected) << "alltoallv, rank " << r;
  }
}

TEST_P(Schedules, GroupedSendsToBothNeighboursBeforeAnyReceiveComplete) {
  const int n = GetParam();
  std::vector<std::vector<double>> out(n), from_left(n), from_right(n);
  for (int r = 0; r < n; ++r) {
    out[r].assign(500, static_cast<double>(r));
    from_left[r].assign(500, -1.0);
    from_right[r].assign(500, -1.0);
  }
  expect_ok(run(n, [&](int r) {
    const int right = (r + 1) % n;
    const int left = (r + n - 1) % n;
    return p2p_group({{true, f64(out[r]), right, 7},
                      {true, f64(out[r]), left, 8},
                      {false, f64(from_left[r]), left, 7},
                      {false, f64(from_right[r]), right, 8}});
  }));
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(from_left[r], out[(r + n - 1) % n]) << "rank " << r;
    EXPECT_EQ(from_right[r], out[(r + 1) % n]) << "rank " << r;
  }
  expect_ok(run(n, [](int) { return dissemination_barrier(); }));
}

INSTANTIATE_TEST_SUITE_P(Loopback, Schedules, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const ::testing::TestParamInfo<int>& world) { return std::to_string(world.param) + "ranks"; });

TEST(SchedulesOverLoopback, AShortMessageIsAMismatchNamingTheSender) {
  std::vector<double> big(16, 1.0);
  std::vector<double> small(8, 1.0);
  const auto outcomes = run(2, [&](int r) {
    return r == 0 ? tagged_send(f64(small), 1, 3) : tagged_recv(f64(big), 0, 3);
  });
  EXPECT_EQ(outcomes[0].status, DT_OK) << outcomes[0].message;
  EXPECT_EQ(outcomes[1].status, DT_ERR_MISMATCH);
  EXPECT_NE(outcomes[1].message.find("the message from rank 0 does not have the 128 bytes expected"), std::string::npos)
      << outcomes[1].message;
}

TEST(SchedulesOverLoopback, ALostPeerFailsTheRanksWaitingForItAndNamesIt) {
  std::vector<std::vector<double>> send(3, std::vector<double>(64, 1.0));
  std::vector<std::vector<double>> recv(3, std::vector<double>(64));
  const auto outcomes =
      run(3, [&](int r) { return ring_allreduce(f64(send[r]), f64(recv[r]), ReduceOp::sum); }, {2});
  for (int r : {0, 1}) {
    EXPECT_EQ(outcomes[r].status, DT_ERR_REMOTE) << "rank " << r << ": " << outcomes[r].message;
    EXPECT_NE(outcomes[r].message.find("rank 2 failed (it left the loopback)"), std::string::npos)
        << outcomes[r].message;
  }
}

}  // namespace
}  // namespace dtrain::comm::schedule
