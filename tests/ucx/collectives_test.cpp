// Every collective x dtype x reduction x size x in-place, on 1 to 4 ranks,
// against references each rank computes locally. Each algorithm family is
// forced in turn (through Tuning); pipelined ones get small chunks so even
// modest sizes run many lanes. The third family forces halving-doubling for
// allreduce and leaves the rest to the automatic choice; the fourth leaves
// everything to it, so small allreduces go through shared memory
// (local_allreduce.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.hpp"
#include "elements.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

using comm::ucx::Algorithm;
using comm::ucx::Tuning;

// Launched as processes (dtrun), the matrix also covers 4 MiB (of float32)
// + 5 elements; as threads of one process that size is left to large_test.cpp.
const std::vector<std::int64_t> kSizes = [] {
  std::vector<std::int64_t> sizes{0, 1, 7, 1023, 65536 + 3};
  if (std::getenv("DTRAIN_WORLD_SIZE") != nullptr) sizes.push_back((4 << 20) / 4 + 5);
  return sizes;
}();

enum class Family { bandwidth, latency, halving, automatic, single_copy };

// The forced families run over UCX messages alone; automatic picks shared
// memory, as on one host by default; single_copy is automatic with every
// allgather and broadcast read straight from the peers' buffers.
Tuning tuning_for(Family family) {
  Tuning t;
  if (family == Family::single_copy) t.single_copy_bytes = 1;
  if (family != Family::automatic && family != Family::single_copy) t.local_bytes = 0;
  if (family == Family::bandwidth) {
    t.allreduce = Algorithm::ring;
    t.reduce_scatter = Algorithm::ring;
    t.allgather = Algorithm::ring;
    t.broadcast = Algorithm::pipeline;
    t.chunk_bytes = 8192;
    t.pipeline_depth = 3;
  } else if (family == Family::halving) {
    t.allreduce = Algorithm::halving_doubling;
  } else if (family == Family::latency) {
    t.allreduce = Algorithm::recursive_doubling;
    t.reduce_scatter = Algorithm::recursive_doubling;
    t.allgather = Algorithm::bruck;
    t.broadcast = Algorithm::tree;
  }
  return t;
}

class Collectives : public ::testing::TestWithParam<std::tuple<int, Family>> {
 protected:
  int ranks() const { return std::get<0>(GetParam()); }
  WorldOptions options() const {
    WorldOptions o;
    o.tuning = tuning_for(std::get<1>(GetParam()));
    return o;
  }
};

// A hash of a result, to check that every rank holds the same bits.
std::int64_t fingerprint(const void* data, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return static_cast<std::int64_t>(h);
}

void expect_same_everywhere(comm::Communicator& comm, std::int64_t mine, const std::string& what) {
  std::vector<std::int64_t> all(comm.size());
  Tensor send(&mine, 1, DType::i64);
  Tensor recv(all.data(), comm.size(), DType::i64);
  wait(comm, comm.allgather(send.get(), recv.get()));
  for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(all[r], mine) << what << ": rank " << r << " differs";
}

TEST_P(Collectives, Allreduce) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (dt_reduce_op op : ops_for(D)) {
          for (std::int64_t count : kSizes) {
            for (bool in_place : {false, true}) {
              const std::string what = std::string("allreduce ") + dtype_name(D) + " " + op_name(op) + " count " +
                                       std::to_string(count) + (in_place ? " in place" : "");
              std::vector<T> send(count), recv(count, Element<D>::make(99));
              for (std::int64_t i = 0; i < count; ++i) send[i] = value<D>(me, i, op);
              Tensor s(send.data(), count, D);
              Tensor r(in_place ? send.data() : recv.data(), count, D);
              wait(comm, comm.allreduce(s.get(), r.get(), op));
              const std::vector<T>& out = in_place ? send : recv;
              int bad = 0;
              for (std::int64_t i = 0; i < count && bad < 5; ++i) {
                const double want = reference<D>(op, n, i, op);
                if (!close_enough<D>(out[i], want)) {
                  ++bad;
                  ADD_FAILURE() << what << " [" << i << "] = " << Element<D>::get(out[i]) << ", want " << want;
                }
              }
              expect_same_everywhere(comm, fingerprint(out.data(), out.size() * sizeof(T)), what);
            }
          }
        }
      });
    }
  }, options());
}

TEST_P(Collectives, ReduceScatter) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (dt_reduce_op op : ops_for(D)) {
          for (std::int64_t count : kSizes) {
            for (bool in_place : {false, true}) {
              const std::string what = std::string("reduce_scatter ") + dtype_name(D) + " " + op_name(op) +
                                       " count " + std::to_string(count) + (in_place ? " in place" : "");
              std::vector<T> send(count * n), recv(count, Element<D>::make(99));
              for (std::int64_t i = 0; i < count * n; ++i) send[i] = value<D>(me, i, op);
              Tensor s(send.data(), count * n, D);
              // In place, the result lands at the start of the send buffer.
              Tensor r(in_place ? send.data() : recv.data(), count, D);
              wait(comm, comm.reduce_scatter(s.get(), r.get(), op));
              const T* out = in_place ? send.data() : recv.data();
              int bad = 0;
              for (std::int64_t i = 0; i < count && bad < 5; ++i) {
                const double want = reference<D>(op, n, me * count + i, op);
                if (!close_enough<D>(out[i], want)) {
                  ++bad;
                  ADD_FAILURE() << what << " [" << i << "] = " << Element<D>::get(out[i]) << ", want " << want;
                }
              }
            }
          }
        }
      });
    }
  }, options());
}

TEST_P(Collectives, Allgather) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (std::int64_t count : kSizes) {
          for (bool in_place : {false, true}) {
            const std::string what = std::string("allgather ") + dtype_name(D) + " count " + std::to_string(count) +
                                     (in_place ? " in place" : "");
            std::vector<T> send(count), recv(count * n, Element<D>::make(99));
            T* mine = in_place ? recv.data() : send.data();
            for (std::int64_t i = 0; i < count; ++i) mine[i] = value<D>(me, i);
            Tensor s(mine, count, D);
            Tensor r(recv.data(), count * n, D);
            wait(comm, comm.allgather(s.get(), r.get()));
            int bad = 0;
            for (int from = 0; from < n; ++from) {
              for (std::int64_t i = 0; i < count && bad < 5; ++i) {
                if (std::memcmp(&recv[from * count + i], &static_cast<const T&>(value<D>(from, i)), sizeof(T)) != 0) {
                  ++bad;
                  ADD_FAILURE() << what << ": block " << from << " [" << i << "] wrong";
                }
              }
            }
          }
        }
      });
    }
  }, options());
}

TEST_P(Collectives, Broadcast) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (std::int64_t count : kSizes) {
          for (int root = 0; root < n; ++root) {
            const std::string what = std::string("broadcast ") + dtype_name(D) + " count " + std::to_string(count) +
                                     " root " + std::to_string(root);
            std::vector<T> buf(count, Element<D>::make(99));
            if (me == root) {
              for (std::int64_t i = 0; i < count; ++i) buf[i] = value<D>(root, i);
            }
            Tensor b(buf.data(), count, D);
            wait(comm, comm.broadcast(b.get(), root));
            int bad = 0;
            for (std::int64_t i = 0; i < count && bad < 5; ++i) {
              const T want = value<D>(root, i);
              if (std::memcmp(&buf[i], &want, sizeof(T)) != 0) {
                ++bad;
                ADD_FAILURE() << what << " [" << i << "] wrong";
              }
            }
          }
        }
      });
    }
  }, options());
}

TEST_P(Collectives, Alltoall) {
  run_world(ranks(), [](comm::Communicator& comm) {
    const int n = comm.size();
    const int me = comm.rank();
    for (DType dtype : all_dtypes()) {
      with_dtype(dtype, [&]<DType D>() {
        using T = typename Element<D>::type;
        for (std::int64_t total : kSizes) {
          const std::int64_t block = total / n;
          for (bool in_place : {false, true}) {
            const std::string what = std::string("alltoall ") + dtype_name(D) + " block " + std::to_string(block) +
                                     (in_place ? " in place" : "");
            std::vector<T> send(block * n), recv(block * n, Element<D>::make(99));
            for (std::int64_t i = 0; i < block * n; ++i) send[i] = value<D>(me, i);
            Tensor s(send.data(), block * n, D);
            Tensor r(in_place ? send.data() : recv.data(), block * n, D);
            wait(comm, comm.alltoall(s.get(), r.get()));
            const std::vector<T>& out = in_place ? send : recv;
            int bad = 0;
            for (int from = 0; from < n; ++from) {
              for (std::int64_t i = 0; i < block && bad < 5; ++i) {
                const T want = value<D>(from, me * block + i);
                if (std::memcmp(&out[from * block + i], &want, sizeof(T)) != 0) {
                  ++bad;
                  ADD_FAILURE() << what << ": block from " << from << " [" << i << "] wrong";
                }
              }
            }
          }
        }
      });
    }
  }, options());
}

// Uneven blocks, some empty: rank r sends (r + 2p + k) % 4 * scale elements
// to rank p, and the receiver computes the same counts. Block j of what r
// sends to p holds value(r, offset of p's block + j).
std::int64_t block_count(int from, int to, int k, std::int64_t scale) { return (from + 2 * to + k) % 4 * scale; }

// Every dtype, every pattern, each block `scale` times its pattern's count.
void check_uneven_alltoallv(comm::Communicator& comm, const std::vector<std::int64_t>& scales) {
  const int n = comm.size();
  const int me = comm.rank();
  for (DType dtype : all_dtypes()) {
    with_dtype(dtype, [&]<DType D>() {
      using T = typename Element<D>::type;
      for (std::int64_t scale : scales) {
        for (int k = 0; k < 4; ++k) {
          for (bool in_place : {false, true}) {
            const std::string what = std::string("alltoallv ") + dtype_name(D) + " scale " +
                                     std::to_string(scale) + " pattern " + std::to_string(k) +
                                     (in_place ? " in place" : "");
            std::vector<std::int64_t> send_counts(n), recv_counts(n), send_first(n), recv_first(n);
            std::int64_t send_total = 0, recv_total = 0;
            for (int p = 0; p < n; ++p) {
              send_first[p] = send_total;
              recv_first[p] = recv_total;
              send_counts[p] = block_count(me, p, k, scale);
              recv_counts[p] = block_count(p, me, k, scale);
              send_total += send_counts[p];
              recv_total += recv_counts[p];
            }
            std::vector<T> send(std::max(send_total, recv_total)), recv(recv_total, Element<D>::make(99));
            for (std::int64_t i = 0; i < send_total; ++i) send[i] = value<D>(me, i);
            Tensor s(send.data(), send_total, D);
            Tensor r(in_place ? send.data() : recv.data(), recv_total, D);
            wait(comm, comm.alltoallv(s.get(), send_counts.data(), r.get(), recv_counts.data()));
            const T* out = in_place ? send.data() : recv.data();
            int bad = 0;
            for (int from = 0; from < n; ++from) {
              // Where `from` put the block for this rank in its send buffer.
              std::int64_t offset = 0;
              for (int p = 0; p < me; ++p) offset += block_count(from, p, k, scale);
              for (std::int64_t j = 0; j < recv_counts[from] && bad < 5; ++j) {
                const T want = value<D>(from, offset + j);
                if (std::memcmp(&out[recv_first[from] + j], &want, sizeof(T)) != 0) {
                  ++bad;
                  ADD_FAILURE() << what << ": block from " << from << " [" << j << "] wrong";
                }
              }
            }
          }
        }
      }
    });
  }
}

TEST_P(Collectives, AlltoallvUnevenAndEmpty) {
  run_world(ranks(), [](comm::Communicator& comm) { check_uneven_alltoallv(comm, {1, 7, 5000}); }, options());
}

// Through shared memory with single copy, an alltoallv block is read
// straight from its sender's buffer when the block is large enough, and
// through the mailboxes when not: at scale 5000, blocks of at least 12 x
// 5000 bytes (3 x 5000 float32, 2 x 5000 float64) go straight and the
// others by mailbox, in one call. All-to-all reads in place where ranks
// share cores too, so 3 ranks on 2 cores mix as well.
TEST(UcxAlltoallv, MixesBlocksReadInPlaceAndThroughMailboxes) {
  for (int n : {2, 3}) {
    WorldOptions options;
    options.tuning.single_copy_bytes = static_cast<std::size_t>(3 * 5000 * 4 * n);
    run_world(n, [](comm::Communicator& comm) { check_uneven_alltoallv(comm, {5000}); }, options);
  }
}

// Over UCX messages the rank that receives the wrong count is told; through
// shared memory every rank sees every rank's counts, and all are told.
void expect_disagreeing_counts_reported(bool shared_memory) {
  WorldOptions options;
  options.tuning.local_bytes = shared_memory ? 4096 : 0;
  run_world(2, [shared_memory](comm::Communicator& comm) {
    // Rank 0 sends 3 elements to rank 1, which expects 2.
    std::vector<std::int32_t> send(4, 1), recv(4, 0);
    std::vector<std::int64_t> send_counts{1, comm.rank() == 0 ? 3 : 1};
    std::vector<std::int64_t> recv_counts{1, 1};
    if (comm.rank() == 1) recv_counts = {2, 1};
    Tensor s(send.data(), 4, DType::i32);
    Tensor r(recv.data(), 4, DType::i32);
    try {
      wait(comm, comm.alltoallv(s.get(), send_counts.data(), r.get(), recv_counts.data()));
      if (shared_memory || comm.rank() == 1) {
        ADD_FAILURE() << "rank " << comm.rank() << " was not told";
      }
    } catch (const Error& e) {
      if (!shared_memory) {
        EXPECT_EQ(comm.rank(), 1) << e.what();
      }
      EXPECT_EQ(e.status(), DT_ERR_MISMATCH) << e.what();
      const std::string told = shared_memory ? "rank 0 sends 3 elements to rank 1, which expects 2" : "rank 0";
      EXPECT_NE(std::string(e.what()).find(told), std::string::npos) << e.what();
      if (shared_memory) {
        EXPECT_EQ(recv, std::vector<std::int32_t>(4, 0)) << "written before the counts agreed";
      }
    }
  }, options);
}

TEST(UcxAlltoallv, CountsThatDisagreeAreReported) {
  expect_disagreeing_counts_reported(false);
  expect_disagreeing_counts_reported(true);
}

std::string name_of(const ::testing::TestParamInfo<std::tuple<int, Family>>& info) {
  const char* family = "rd_bruck_tree";
  if (std::get<1>(info.param) == Family::bandwidth) family = "ring_pipeline";
  if (std::get<1>(info.param) == Family::halving) family = "rhd_auto";
  if (std::get<1>(info.param) == Family::automatic) family = "auto";
  if (std::get<1>(info.param) == Family::single_copy) family = "single_copy";
  return std::to_string(std::get<0>(info.param)) + "ranks_" + family;
}

INSTANTIATE_TEST_SUITE_P(Ucx, Collectives,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4),
                                            ::testing::Values(Family::bandwidth, Family::latency, Family::halving,
                                                              Family::automatic, Family::single_copy)),
                         name_of);

}  // namespace
}  // namespace dtrain::test
