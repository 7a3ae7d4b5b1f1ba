// Allreduces through shared memory (local_allreduce.hpp), which ranks on
// one host take by default: ranks that disagree about the operation, many
// outstanding at once with ranks at different speeds (each mailbox has only
// Mailboxes::kSlots), buffers larger than the mailboxes (from 16 MiB, streamed out),
// late peers, and sub-communicators with mailboxes of their own. Results of every dtype and
// reduction are checked by collectives_test.cpp (its "auto" family).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

using std::chrono::milliseconds;

// Runs one allreduce, blocking on even ranks and scheduled on odd ones.
void allreduce_either_way(comm::Communicator& comm, Tensor& send, Tensor& recv, int op) {
  if (comm.rank() % 2 == 0) {
    allreduce_now(comm, send, recv, op);
  } else {
    wait(comm, comm.allreduce(send.get(), recv.get(), op));
  }
}

// Sums `count` floats, in place or not, and checks every element: small
// integers, so any order of the additions gives the same exact sum.
void expect_sum(comm::Communicator& comm, std::int64_t count, bool in_place) {
  const int n = comm.size();
  const int me = comm.rank();
  std::vector<float> send(count), recv(count, -1.0f);
  for (std::int64_t i = 0; i < count; ++i) send[i] = static_cast<float>(me * 100 + i % 1000);
  Tensor s(send.data(), count, DType::f32);
  Tensor r(in_place ? send.data() : recv.data(), count, DType::f32);
  allreduce_either_way(comm, s, r, DT_SUM);
  const std::vector<float>& out = in_place ? send : recv;
  for (std::int64_t i = 0; i < count; ++i) {
    const float want = static_cast<float>(100 * n * (n - 1) / 2 + n * (i % 1000));
    ASSERT_EQ(out[i], want) << count << " elements" << (in_place ? " in place" : "") << " [" << i << "]";
  }
}

TEST(UcxLocalAllreduce, RanksThatDisagreeGetMismatch) {
  for (int ranks : {2, 3, 4}) {
    run_world(ranks, [](comm::Communicator& comm) {
      const int me = comm.rank();
      // Rank 0 passes fewer elements than the others.
      std::vector<float> values(8, 1.0f);
      Tensor fewer(values.data(), me == 0 ? 4 : 8, DType::f32);
      std::string message = expect_error(DT_ERR_MISMATCH, [&] { allreduce_either_way(comm, fewer, fewer, DT_SUM); });
      EXPECT_NE(message.find(me == 0 ? "rank 1 contributed 32 bytes of float32 "
                                       "sum, this rank 16 bytes"
                                     : "rank 0 contributed 16 bytes of float32 "
                                       "sum, this rank 32 bytes"),
                std::string::npos)
          << message;

      // The same bytes, but rank 0 sums integers.
      std::vector<std::int32_t> integers(2, 1);
      Tensor as_float(values.data(), 2, DType::f32);
      Tensor as_int(integers.data(), 2, DType::i32);
      Tensor& mine = me == 0 ? as_int : as_float;
      message = expect_error(DT_ERR_MISMATCH, [&] { allreduce_either_way(comm, mine, mine, DT_SUM); });
      EXPECT_NE(message.find(me == 0 ? "of float32 sum, this rank 8 bytes of int32 sum"
                                     : "of int32 sum, this rank 8 bytes of float32"),
                std::string::npos)
          << message;

      // Rank 0 passes nothing at all.
      Tensor none(values.data(), me == 0 ? 0 : 8, DType::f32);
      message = expect_error(DT_ERR_MISMATCH, [&] { allreduce_either_way(comm, none, none, DT_SUM); });
      EXPECT_NE(message.find("contributed"), std::string::npos) << message;

      // Every rank failed the same operations: the next one works.
      float x = static_cast<float>(me + 1);
      Tensor one(&x, 1, DType::f32);
      allreduce_either_way(comm, one, one, DT_SUM);
      EXPECT_EQ(x, static_cast<float>(comm.size() * (comm.size() + 1) / 2));
    });
  }
}

// Sixteen at once, then blocking ones, with a rank that keeps falling
// behind: a slot is rewritten two operations later, so a rank that ran
// ahead must not overwrite what a slow one has yet to read. Small buffers,
// and buffers whose reduction the ranks split.
TEST(UcxLocalAllreduce, ManyOutstandingCompleteInOrder) {
  for (int ranks : {2, 3, 4}) {
    run_world(ranks, [](comm::Communicator& comm) {
      const int n = comm.size();
      const int me = comm.rank();
      for (std::int64_t count : {std::int64_t{33}, std::int64_t{5000}}) {
        constexpr int kOps = 16;
        std::vector<std::vector<double>> data(kOps, std::vector<double>(count));
        std::vector<comm::RequestPtr> requests;
        for (int k = 0; k < kOps; ++k) {
          for (std::int64_t i = 0; i < count; ++i) data[k][i] = me * 1000.0 + k * 10.0 + static_cast<double>(i);
          Tensor t(data[k].data(), count, DType::f64);
          requests.push_back(comm.allreduce(t.get(), t.get(), DT_SUM));
          if (me == n - 1 && k % 4 == 0) std::this_thread::sleep_for(milliseconds(3));
        }
        for (int k = 0; k < kOps; ++k) {
          wait(comm, requests[k]);
          for (std::int64_t i = 0; i < count; ++i) {
            const double want = 1000.0 * n * (n - 1) / 2 + n * (k * 10.0 + static_cast<double>(i));
            ASSERT_EQ(data[k][i], want) << count << " elements, operation " << k << " [" << i << "]";
          }
        }
        for (int k = 0; k < 50; ++k) {
          std::vector<std::int64_t> v(static_cast<std::size_t>(count), me + k);
          Tensor t(v.data(), count, DType::i64);
          if (me == 0 && k % 10 == 0) std::this_thread::sleep_for(milliseconds(2));
          allreduce_either_way(comm, t, t, DT_MAX);
          for (std::int64_t i = 0; i < count; ++i) {
            ASSERT_EQ(v[i], n - 1 + k) << count << " elements, blocking operation " << k << " [" << i << "]";
          }
        }
      }
    });
  }
}

// Mailboxes of 4 KiB: buffers go through in pieces, in place or not, and a
// rank with more pieces than the others is told at the first one.
TEST(UcxLocalAllreduce, BuffersLargerThanTheMailboxes) {
  WorldOptions options;
  options.tuning.local_bytes = 4096;
  for (int ranks : {2, 3, 4}) {
    run_world(
        ranks,
        [](comm::Communicator& comm) {
          for (std::int64_t count : {1000, 1024, 5000, 70001}) {
            for (bool in_place : {false, true}) expect_sum(comm, count, in_place);
          }
          std::vector<float> values(3072, 1.0f);
          Tensor longer(values.data(), comm.rank() == 0 ? 2048 : 3072, DType::f32);
          const std::string message =
              expect_error(DT_ERR_MISMATCH, [&] { allreduce_either_way(comm, longer, longer, DT_SUM); });
          EXPECT_NE(message.find("contributed"), std::string::npos) << message;
        },
        options);
  }
}

// From 16 MiB the ranks stream their results (local_allreduce.cpp); in
// mailboxes of 64 KiB the pieces are split among the ranks, and streamed
// into the mailboxes or not (handoff.hpp), with a short last piece that is
// not split.
TEST(UcxLocalAllreduce, LargeBuffersInSplitPieces) {
  WorldOptions options;
  options.tuning.local_bytes = 64 * 1024;
  for (int ranks : {2, 3, 4}) {
    run_world(
        ranks,
        [](comm::Communicator& comm) {
          for (bool in_place : {false, true}) expect_sum(comm, (16 << 20) / 4 + 5, in_place);
        },
        options);
  }
}

// A peer that arrives long after the spin is over (the waiting rank sleeps
// a millisecond at a time: nothing signals a contribution).
TEST(UcxLocalAllreduce, LatePeer) {
  run_world(2, [](comm::Communicator& comm) {
    if (comm.rank() == 1) std::this_thread::sleep_for(milliseconds(30));
    std::int32_t v = comm.rank() + 5;
    Tensor t(&v, 1, DType::i32);
    allreduce_either_way(comm, t, t, DT_PROD);
    EXPECT_EQ(v, 30);
  });
}

// Each half of a split has mailboxes of its own; operations on the parent
// and on the halves interleave.
TEST(UcxLocalAllreduce, SubCommunicatorsHaveTheirOwn) {
  for (int ranks : {3, 4}) {
    run_world(ranks, [](comm::Communicator& comm) {
      const int me = comm.rank();
      auto half = comm.split(me % 2, me);
      for (int k = 0; k < 10; ++k) {
        float mine = static_cast<float>(me + k);
        Tensor t(&mine, 1, DType::f32);
        allreduce_either_way(*half, t, t, DT_SUM);
        float want = 0;
        for (int r = me % 2; r < comm.size(); r += 2) want += static_cast<float>(r + k);
        ASSERT_EQ(mine, want) << "half, round " << k;

        float all = 1;
        Tensor u(&all, 1, DType::f32);
        allreduce_either_way(comm, u, u, DT_SUM);
        ASSERT_EQ(all, static_cast<float>(comm.size())) << "parent, round " << k;
      }
    });
  }
}

}  // namespace
}  // namespace dtrain::test
