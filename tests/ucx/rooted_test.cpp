// reduce, gather, scatter, allgatherv and reduce_scatterv over UCX on 1 to 4
// ranks, through UCX messages and through shared memory (with mailboxes
// small enough that most buffers go in pieces): every dtype and op, uneven
// counts with zeros, roots everywhere, in place, against references each
// rank computes locally; ranks that disagree get DT_ERR_MISMATCH
// everywhere.

#include <gtest/gtest.h>

#include <numeric>
#include <string>
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

// Every rank runs `call` and must get DT_ERR_MISMATCH, naming the rank it
// disagrees with; then a barrier shows the communicator still works.
template <typename Call>
void expect_mismatch_everywhere(comm::Communicator& comm, Call&& call) {
  const std::string message = expect_error(DT_ERR_MISMATCH, [&] { wait(comm, call()); });
  EXPECT_NE(message.find("ranks disagree"), std::string::npos) << message;
  wait(comm, comm.barrier());
}

TEST_P(Rooted, DisagreementIsAMismatchOnEveryRank) {
  if (ranks() < 2) GTEST_SKIP() << "one rank cannot disagree with itself";
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    const bool odd_one = me == n - 1;
    std::vector<float> send(4 * n, 1.0f), recv(4 * n, 0.0f);
    Tensor s4(send.data(), 4, DType::f32);
    Tensor s3(send.data(), 3, DType::f32);
    Tensor all(recv.data(), 4 * n, DType::f32);
    Tensor block(recv.data(), 4, DType::f32);
    Tensor sendall(send.data(), 4 * n, DType::f32);

    // Roots: the last rank names itself, the others rank 0.
    const int root = odd_one ? me : 0;
    expect_mismatch_everywhere(comm, [&] { return comm.gather(s4.get(), all.get(), root); });
    // Counts.
    expect_mismatch_everywhere(comm, [&] {
      return comm.reduce(odd_one ? s3.get() : s4.get(), me == 0 ? block.get() : TensorView{}, DT_SUM, 0);
    });
    // Dtypes.
    std::vector<double> wide_recv(4);
    Tensor wide_block(wide_recv.data(), 4, DType::f64);
    expect_mismatch_everywhere(comm, [&] {
      return comm.scatter(me == 0 ? sendall.get() : TensorView{}, odd_one ? wide_block.get() : block.get(), 0);
    });
    // Ops.
    std::vector<std::int64_t> counts(n, 4);
    expect_mismatch_everywhere(comm, [&] {
      return comm.reduce_scatterv(sendall.get(), counts.data(), block.get(), odd_one ? DT_MAX : DT_SUM);
    });
    // recv_counts.
    std::vector<std::int64_t> other(n, 4);
    other[0] = odd_one ? 3 : 4;
    Tensor mine(send.data(), other[me], DType::f32);
    expect_mismatch_everywhere(comm, [&] { return comm.allgatherv(mine.get(), all.get(), other.data()); });
    // Operations: the last rank gathers while the others scatter.
    expect_mismatch_everywhere(comm, [&] {
      return odd_one ? comm.gather(s4.get(), TensorView{}, 0)
                     : comm.scatter(me == 0 ? sendall.get() : TensorView{}, block.get(), 0);
    });
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
