// reduce, gather, scatter, allgatherv and reduce_scatterv over UCX on 1 to 4
// ranks, through UCX messages and through shared memory (with mailboxes
// small enough that most buffers go in pieces): every dtype and op, uneven
// counts with zeros, roots everywhere, in place, against references each
// rank computes locally; ranks that disagree get DT_ERR_MISMATCH where
// they see it; ranks that only send run ahead.

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "comm/exchange_plan.hpp"
#include "elements.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

const std::vector<std::int64_t> kCounts{0, 1, 7, 1023, 20000};

// Uneven counts per rank, zeros included: variant 0 leaves rank 0 empty,
// variant 1 every odd rank, variant 2 all but the last rank.
std::vector<std::int64_t> uneven_counts(int n, int variant) {
  std::vector<std::int64_t> counts(n);
  for (int r = 0; r < n; ++r) {
    if (variant == 0) counts[r] = r == 0 ? 0 : 5 * r + 3;
    if (variant == 1) counts[r] = r % 2 == 1 ? 0 : 1000 + r;
    if (variant == 2) counts[r] = r == n - 1 ? 17 : 0;
  }
  return counts;
}

// Checks `count` elements of `out` against `want(i)`; reports the first few misses.
template <DType D, typename Want>
void expect_values(const typename Element<D>::type* out, std::int64_t count, Want&& want, const std::string& what) {
  int bad = 0;
  for (std::int64_t i = 0; i < count && bad < 5; ++i) {
    const double w = want(i);
    if (!close_enough<D>(out[i], w)) {
      ++bad;
      ADD_FAILURE() << what << " [" << i << "] = " << Element<D>::get(out[i]) << ", want " << w;
    }
  }
}

// UCX messages alone; shared memory (local_exchange.hpp) in pieces of 8
// KiB; or shared memory with gather, scatter and allgatherv of any size
// read straight from the peers' buffers (DTRAIN_UCX_SINGLE_COPY_BYTES;
// where the ranks outnumber the cores, through the mailboxes after all).
enum class Path { messages, shared_memory, single_copy };

class Rooted : public ::testing::TestWithParam<std::tuple<int, Path>> {
 protected:
  int ranks() const { return std::get<0>(GetParam()); }
  WorldOptions options() const {
    WorldOptions o;
    o.tuning.local_bytes = std::get<1>(GetParam()) == Path::messages ? 0 : 8192;
    o.tuning.single_copy_bytes = std::get<1>(GetParam()) == Path::single_copy ? 1 : 0;
    return o;
  }
};

TEST_P(Rooted, ReduceToEveryRootInAndOutOfPlace) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (dt_reduce_op op : ops_for(D)) {
          for (std::int64_t count : kCounts) {
            for (int root = 0; root < n; ++root) {
              const bool in_place = (root + count) % 2 == 1;
              const std::string what = std::string("reduce ") + dtype_name(D) + " " + op_name(op) + " count " +
                                       std::to_string(count) + " root " + std::to_string(root) +
                                       (in_place ? " in place" : "");
              std::vector<T> send(count), recv(count, Element<D>::make(99));
              for (std::int64_t i = 0; i < count; ++i) send[i] = value<D>(me, i, op);
              Tensor s(send.data(), count, D);
              Tensor r(in_place ? send.data() : recv.data(), count, D);
              wait(comm, comm.reduce(s.get(), me == root ? r.get() : TensorView{}, op, root));
              if (me != root) {
                EXPECT_EQ(recv, std::vector<T>(count, Element<D>::make(99))) << what << ": recv off the root";
                continue;
              }
              expect_values<D>(in_place ? send.data() : recv.data(), count,
                               [&](std::int64_t i) { return reference<D>(op, n, i, op); }, what);
            }
          }
        }
      });
    }
  }, options());
}

TEST_P(Rooted, GatherAndScatterEveryDtypeAndRoot) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (std::int64_t count : kCounts) {
          for (int root = 0; root < n; ++root) {
            const bool in_place = (root + count) % 2 == 0;
            const std::string tail = std::string(dtype_name(D)) + " count " + std::to_string(count) + " root " +
                                     std::to_string(root) + (in_place ? " in place" : "");
            // Gather: rank r's element i is value(r, i); in place, the
            // root's send is its own block of recv.
            std::vector<T> mine(count), all(count * n, Element<D>::make(99));
            for (std::int64_t i = 0; i < count; ++i) mine[i] = value<D>(me, i);
            if (me == root && in_place) std::copy(mine.begin(), mine.end(), all.begin() + root * count);
            Tensor s(me == root && in_place ? all.data() + root * count : mine.data(), count, D);
            Tensor r(all.data(), count * n, D);
            wait(comm, comm.gather(s.get(), me == root ? r.get() : TensorView{}, root));
            if (me == root) {
              expect_values<D>(all.data(), count * n,
                               [&](std::int64_t i) { return Element<D>::get(value<D>(i / count, i % count)); },
                               "gather " + tail);
            }
            // Scatter: block r of the root's send is value(root, r * count + i).
            std::vector<T> blocks(count * n), block(count, Element<D>::make(99));
            for (std::int64_t i = 0; i < count * n; ++i) blocks[i] = value<D>(root, i);
            Tensor bs(blocks.data(), count * n, D);
            Tensor br(me == root && in_place ? blocks.data() + root * count : block.data(), count, D);
            wait(comm, comm.scatter(me == root ? bs.get() : TensorView{}, br.get(), root));
            const T* got = me == root && in_place ? blocks.data() + root * count : block.data();
            expect_values<D>(got, count,
                             [&](std::int64_t i) { return Element<D>::get(value<D>(root, me * count + i)); },
                             "scatter " + tail);
          }
        }
      });
    }
  }, options());
}

TEST_P(Rooted, AllgathervUnevenCountsWithZeros) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (int variant = 0; variant < 3; ++variant) {
          for (bool in_place : {false, true}) {
            const std::vector<std::int64_t> counts = uneven_counts(n, variant);
            const std::vector<std::int64_t> starts = comm::block_starts(counts);
            const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
            const std::string what = std::string("allgatherv ") + dtype_name(D) + " variant " +
                                     std::to_string(variant) + (in_place ? " in place" : "");
            // Two elements past the blocks, which must stay as they are.
            std::vector<T> recv(total + 2, Element<D>::make(99));
            std::vector<T> send(counts[me]);
            for (std::int64_t i = 0; i < counts[me]; ++i) send[i] = value<D>(me, i);
            if (in_place) std::copy(send.begin(), send.end(), recv.begin() + starts[me]);
            Tensor s(in_place ? recv.data() + starts[me] : send.data(), counts[me], D);
            Tensor r(recv.data(), total + 2, D);
            wait(comm, comm.allgatherv(s.get(), r.get(), counts.data()));
            for (int from = 0; from < n; ++from) {
              expect_values<D>(recv.data() + starts[from], counts[from],
                               [&](std::int64_t i) { return Element<D>::get(value<D>(from, i)); },
                               what + " block " + std::to_string(from));
            }
            expect_values<D>(recv.data() + total, 2, [](std::int64_t) { return 99.0; }, what + " past the blocks");
          }
        }
      });
    }
  }, options());
}

TEST_P(Rooted, ReduceScattervUnevenCountsEveryOp) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (dt_reduce_op op : ops_for(D)) {
          for (int variant = 0; variant < 3; ++variant) {
            const bool in_place = variant == 1;
            const std::vector<std::int64_t> counts = uneven_counts(n, variant);
            const std::vector<std::int64_t> starts = comm::block_starts(counts);
            const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
            const std::string what = std::string("reduce_scatterv ") + dtype_name(D) + " " + op_name(op) +
                                     " variant " + std::to_string(variant) + (in_place ? " in place" : "");
            std::vector<T> send(total), recv(counts[me], Element<D>::make(99));
            for (std::int64_t i = 0; i < total; ++i) send[i] = value<D>(me, i, op);
            Tensor s(send.data(), total, D);
            T* out = in_place ? send.data() + starts[me] : recv.data();
            Tensor r(out, counts[me], D);
            wait(comm, comm.reduce_scatterv(s.get(), counts.data(), r.get(), op));
            expect_values<D>(out, counts[me], [&](std::int64_t i) { return reference<D>(op, n, starts[me] + i, op); },
                             what);
          }
        }
      });
    }
  }, options());
}

// Runs `call`. Over UCX messages every rank first shows the others its
// call, so each must get DT_ERR_MISMATCH naming the rank it disagrees with.
// Through the mailboxes (local_exchange.hpp) a rank compares its call with
// those of the ranks it receives from, and a rank that only sends compares
// nothing: `sees` says whether this rank receives from one that disagrees
// with it, and then it must get DT_ERR_MISMATCH; otherwise it must succeed,
// or, where a single copy made it wait for every rank, may fail so too.
// Then a barrier shows the communicator still works.
template <typename Call>
void expect_mismatch_where_seen(comm::Communicator& comm, Path path, bool sees, Call&& call) {
  if (sees || path == Path::messages) {
    const std::string message = expect_error(DT_ERR_MISMATCH, [&] { wait(comm, call()); });
    EXPECT_NE(message.find("ranks disagree"), std::string::npos) << message;
  } else if (path == Path::shared_memory) {
    wait(comm, call());
  } else {
    try {
      wait(comm, call());
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_MISMATCH) << e.what();
    }
  }
  wait(comm, comm.barrier());
}

TEST_P(Rooted, DisagreementIsAMismatchWhereItIsSeen) {
  if (ranks() < 2) GTEST_SKIP() << "one rank cannot disagree with itself";
  const Path path = std::get<1>(GetParam());
  run_world(ranks(), [path](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    const bool odd_one = me == n - 1;
    std::vector<float> send(4 * n, 1.0f), recv(4 * n, 0.0f);
    Tensor s4(send.data(), 4, DType::f32);
    Tensor s3(send.data(), 3, DType::f32);
    Tensor all(recv.data(), 4 * n, DType::f32);
    Tensor block(recv.data(), 4, DType::f32);
    Tensor sendall(send.data(), 4 * n, DType::f32);
    const auto expect = [&](bool sees, auto&& call) { expect_mismatch_where_seen(comm, path, sees, call); };

    // Roots: the last rank names itself, the others rank 0; both roots
    // receive from every rank.
    const int root = odd_one ? me : 0;
    expect(me == root, [&] { return comm.gather(s4.get(), all.get(), root); });
    // Counts: the root receives the last rank's.
    expect(me == 0, [&] { return comm.reduce(odd_one ? s3.get() : s4.get(), me == 0 ? block.get() : TensorView{}, DT_SUM, 0); });
    // Dtypes: the last rank receives from a root that disagrees with it;
    // the others agree with the root.
    std::vector<double> wide_recv(4);
    Tensor wide_block(wide_recv.data(), 4, DType::f64);
    expect(odd_one, [&] {
      return comm.scatter(me == 0 ? sendall.get() : TensorView{}, odd_one ? wide_block.get() : block.get(), 0);
    });
    // Ops: every rank receives from every other.
    std::vector<std::int64_t> counts(n, 4);
    expect(true, [&] { return comm.reduce_scatterv(sendall.get(), counts.data(), block.get(), odd_one ? DT_MAX : DT_SUM); });
    // recv_counts.
    std::vector<std::int64_t> other(n, 4);
    other[0] = odd_one ? 3 : 4;
    Tensor mine(send.data(), other[me], DType::f32);
    expect(true, [&] { return comm.allgatherv(mine.get(), all.get(), other.data()); });
    // Operations: the last rank gathers to rank 0 while the others scatter
    // from it. Rank 0 and the last rank only send, and the others receive
    // from a root that agrees with them: through the mailboxes no rank
    // finds out (DTRAIN_CHECK_COLLECTIVES=1 tells every rank:
    // call_check_test.cpp).
    expect(false, [&] {
      return odd_one ? comm.gather(s4.get(), TensorView{}, 0)
                     : comm.scatter(me == 0 ? sendall.get() : TensorView{}, block.get(), 0);
    });
  }, options());
}

// Through the mailboxes a rank that only sends ends without waiting for the
// root: the others run Mailboxes::kSlots - 1 gathers ahead of a root that
// has not called yet, and the next waits for it. The root then finds every
// gather's values, none overwritten by a later one.
TEST_P(Rooted, SendersRunAheadOfTheRoot) {
  if (ranks() < 2 || std::get<1>(GetParam()) != Path::shared_memory) {
    GTEST_SKIP() << "only through the mailboxes, at two ranks or more";
  }
  run_world(ranks(), [](comm::Communicator& comm) {
    using Clock = std::chrono::steady_clock;
    constexpr int kAhead = 3;  // Mailboxes::kSlots - 1
    constexpr auto kRootLate = std::chrono::milliseconds(2000);
    const int n = comm.size();
    const int me = comm.rank();
    const auto begun = Clock::now();
    if (me == 0) std::this_thread::sleep_for(kRootLate);
    std::vector<std::vector<std::int32_t>> gathered(kAhead + 1, std::vector<std::int32_t>(4 * n, -1));
    for (int call = 0; call <= kAhead; ++call) {
      std::vector<std::int32_t> mine(4, 100 * call + me);
      Tensor s(mine.data(), 4, DType::i32);
      Tensor r(gathered[call].data(), 4 * n, DType::i32);
      wait(comm, comm.gather(s.get(), me == 0 ? r.get() : TensorView{}, 0));
      if (me != 0 && call == kAhead - 1) {
        EXPECT_LT(Clock::now() - begun, kRootLate / 2) << "gather " << call << " waited for the root";
      }
      if (me != 0 && call == kAhead) {
        EXPECT_GT(Clock::now() - begun, kRootLate / 2) << "gather " << call << " did not wait for the root";
      }
    }
    if (me != 0) return;
    for (int call = 0; call <= kAhead; ++call) {
      for (int i = 0; i < 4 * n; ++i) EXPECT_EQ(gathered[call][i], 100 * call + i / 4) << "gather " << call << " [" << i << "]";
    }
  }, options());
}

// Through the mailboxes a broadcast's or scatter's other ranks wait for the
// root alone: with the last rank late, the others receive both without it.
TEST_P(Rooted, ReceiversWaitForTheRootAlone) {
  if (ranks() < 3 || std::get<1>(GetParam()) != Path::shared_memory) {
    GTEST_SKIP() << "only through the mailboxes, at three ranks or more";
  }
  run_world(ranks(), [](comm::Communicator& comm) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kLate = std::chrono::milliseconds(2000);
    const int n = comm.size();
    const int me = comm.rank();
    const auto begun = Clock::now();
    if (me == n - 1) std::this_thread::sleep_for(kLate);
    std::vector<std::int32_t> value(4, me == 0 ? 7 : -1), blocks(4 * n), block(4, -1);
    for (int i = 0; i < 4 * n; ++i) blocks[i] = i;
    Tensor v(value.data(), 4, DType::i32);
    Tensor bs(blocks.data(), 4 * n, DType::i32);
    Tensor b(block.data(), 4, DType::i32);
    wait(comm, comm.broadcast(v.get(), 0));
    wait(comm, comm.scatter(me == 0 ? bs.get() : TensorView{}, b.get(), 0));
    if (me != 0 && me != n - 1) {
      EXPECT_LT(Clock::now() - begun, kLate / 2) << "rank " << me << " waited for the late rank";
    }
    EXPECT_EQ(value, std::vector<std::int32_t>(4, 7));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(block[i], 4 * me + i);
  }, options());
}

// Collectives of every kind back to back, roots moving, sizes from one
// element to several pieces: senders running ahead meet receivers, and every
// result is checked.
TEST_P(Rooted, MixedCollectivesBackToBack) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    const std::vector<std::int64_t> sizes{1, 16, 3000};  // 3000 int32 take two pieces of 8 KiB
    for (int round = 0; round < 60; ++round) {
      const std::int64_t count = sizes[round % sizes.size()];
      const int root = round % n;
      const auto value = [&](int rank, std::int64_t i) { return static_cast<std::int32_t>(round * 7 + rank * 3 + i % 5); };
      std::vector<std::int32_t> mine(count), all(count * n, -1), one(count, -1);
      for (std::int64_t i = 0; i < count; ++i) mine[i] = value(me, i);
      Tensor s(mine.data(), count, DType::i32);
      Tensor a(all.data(), count * n, DType::i32);
      Tensor o(one.data(), count, DType::i32);
      const std::string what = "round " + std::to_string(round);

      wait(comm, comm.gather(s.get(), me == root ? a.get() : TensorView{}, root));
      if (me == root) {
        for (std::int64_t i = 0; i < count * n; ++i) ASSERT_EQ(all[i], value(static_cast<int>(i / count), i % count)) << what;
      }
      wait(comm, comm.reduce(s.get(), me == root ? o.get() : TensorView{}, DT_SUM, root));
      if (me == root) {
        for (std::int64_t i = 0; i < count; ++i) {
          std::int32_t sum = 0;
          for (int r = 0; r < n; ++r) sum += value(r, i);
          ASSERT_EQ(one[i], sum) << what;
        }
      }
      std::vector<std::int32_t> blocks(count * n);
      for (std::int64_t i = 0; i < count * n; ++i) blocks[i] = value(root, i) + 1;
      Tensor b(blocks.data(), count * n, DType::i32);
      wait(comm, comm.scatter(me == root ? b.get() : TensorView{}, o.get(), root));
      for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(one[i], value(root, me * count + i) + 1) << what;
      std::vector<std::int32_t> cast = me == root ? mine : std::vector<std::int32_t>(count, -1);
      Tensor c(cast.data(), count, DType::i32);
      wait(comm, comm.broadcast(c.get(), root));
      for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(cast[i], value(root, i)) << what;
      wait(comm, comm.allreduce(s.get(), o.get(), DT_MAX));
      for (std::int64_t i = 0; i < count; ++i) ASSERT_EQ(one[i], value(n - 1, i)) << what;
    }
  }, options());
}

TEST_P(Rooted, RefusedEverywhereStartsNothing) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    std::vector<std::int32_t> send(n, comm.rank()), recv(n, -1);
    Tensor s(send.data(), 1, DType::i32);
    // Each call is refused on every rank (rank 0 included, as the root).
    Tensor r(recv.data(), n, DType::i32);
    std::vector<std::int64_t> negative(n, 1);
    negative[0] = -1;
    std::vector<std::int64_t> too_many(n, 2);
    expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.gather(s.get(), r.get(), n); });
    expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.reduce(s.get(), r.get(), DT_SUM, -1); });
    expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.allgatherv(s.get(), r.get(), negative.data()); });
    expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.allgatherv(s.get(), r.get(), too_many.data()); });
    expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.reduce_scatterv(r.get(), too_many.data(), s.get(), DT_SUM); });
    expect_error(DT_ERR_INVALID_ARGUMENT, [&] { comm.reduce(s.get(), TensorView{}, 99, 0); });
    // Had any of them started, this gather would meet its messages.
    wait(comm, comm.gather(s.get(), comm.rank() == 0 ? r.get() : TensorView{}, 0));
    if (comm.rank() == 0) {
      for (int i = 0; i < n; ++i) EXPECT_EQ(recv[i], i);
    }
  }, options());
}

INSTANTIATE_TEST_SUITE_P(Ucx, Rooted,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(Path::messages, Path::shared_memory, Path::single_copy)),
                         [](const ::testing::TestParamInfo<std::tuple<int, Path>>& param) {
                           const Path path = std::get<1>(param.param);
                           return std::to_string(std::get<0>(param.param)) + "ranks" +
                                  (path == Path::messages        ? "_messages"
                                   : path == Path::shared_memory ? "_shared_memory"
                                                                 : "_single_copy");
                         });

}  // namespace
}  // namespace dtrain::test
