// One size well past every threshold (4 MiB + 5 elements of f32, summed),
// through every collective, with the algorithm choice left to the defaults
// and each family forced.

#include <gtest/gtest.h>

#include <vector>

#include "elements.hpp"
#include "harness.hpp"

namespace dtrain::test {
namespace {

using comm::ucx::Algorithm;

constexpr std::int64_t kCount = (4 << 20) / 4 + 5;

void check(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << what << " [" << i << "]";
}

void run_all(comm::Communicator& comm) {
  const int n = comm.size();
  const int me = comm.rank();
  auto v = [](int rank, std::int64_t i) { return value<DType::f32>(rank, i); };

  std::vector<float> data(kCount), want(kCount);
  for (std::int64_t i = 0; i < kCount; ++i) {
    data[i] = v(me, i);
    want[i] = static_cast<float>(reference<DType::f32>(DT_SUM, n, i));
  }
  Tensor t(data.data(), kCount, DType::f32);
  wait(comm, comm.allreduce(t.get(), t.get(), DT_SUM));
  check(data, want, "allreduce");

  const std::int64_t block = kCount / n;
  std::vector<float> send(block * n), part(block);
  for (std::int64_t i = 0; i < block * n; ++i) send[i] = v(me, i);
  Tensor s(send.data(), block * n, DType::f32);
  Tensor p(part.data(), block, DType::f32);
  wait(comm, comm.reduce_scatter(s.get(), p.get(), DT_SUM));
  std::vector<float> want_part(block);
  for (std::int64_t i = 0; i < block; ++i) {
    want_part[i] = static_cast<float>(reference<DType::f32>(DT_SUM, n, me * block + i));
  }
  check(part, want_part, "reduce_scatter");

  std::vector<float> gathered(block * n), want_gathered(block * n);
  for (std::int64_t i = 0; i < block; ++i) part[i] = v(me, i);
  for (int r = 0; r < n; ++r) {
    for (std::int64_t i = 0; i < block; ++i) want_gathered[r * block + i] = v(r, i);
  }
  Tensor g(gathered.data(), block * n, DType::f32);
  wait(comm, comm.allgather(p.get(), g.get()));
  check(gathered, want_gathered, "allgather");

  std::vector<float> buf(kCount), want_buf(kCount);
  for (std::int64_t i = 0; i < kCount; ++i) {
    want_buf[i] = v(n - 1, i);
    buf[i] = me == n - 1 ? want_buf[i] : 0.0f;
  }
  Tensor b(buf.data(), kCount, DType::f32);
  wait(comm, comm.broadcast(b.get(), n - 1));
  check(buf, want_buf, "broadcast");

  std::vector<float> exchanged(block * n), want_exchanged(block * n);
  for (int r = 0; r < n; ++r) {
    for (std::int64_t i = 0; i < block; ++i) want_exchanged[r * block + i] = v(r, me * block + i);
  }
  Tensor x(exchanged.data(), block * n, DType::f32);
  wait(comm, comm.alltoall(s.get(), x.get()));
  check(exchanged, want_exchanged, "alltoall");
}

class Large : public ::testing::TestWithParam<int> {};

TEST_P(Large, DefaultChoice) { run_world(GetParam(), run_all); }

TEST_P(Large, LatencyAlgorithmsForced) {
  WorldOptions options;
  options.tuning.allreduce = Algorithm::recursive_doubling;
  options.tuning.reduce_scatter = Algorithm::recursive_doubling;
  options.tuning.allgather = Algorithm::bruck;
  options.tuning.broadcast = Algorithm::tree;
  run_world(GetParam(), run_all, options);
}

INSTANTIATE_TEST_SUITE_P(Ucx, Large, ::testing::Values(3, 4));

}  // namespace
}  // namespace dtrain::test
