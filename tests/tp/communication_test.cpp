// What a Megatron MLP block (column-parallel, then row-parallel) costs in
// collectives, counted by the tensor-parallel group that starts them: one
// allreduce forward and one backward, or with sequence parallelism one
// allgather and one reduce-scatter each way (the backward given the whole
// input the forward gathered), and one more allgather when the column
// layer's backward gathers its input again. Ranks are threads.
#include <gtest/gtest.h>

#include <vector>

#include "parallel/tp/linear.hpp"
#include "ucx/harness.hpp"

namespace {

using dtrain::DType;
using dtrain::parallel::tp::Group;
using dtrain::parallel::tp::LinearFlags;
using dtrain::parallel::tp::Matrix;

struct Buffer {
  std::vector<float> values;
  Matrix matrix;
  Buffer(std::int64_t rows, std::int64_t cols) : values(static_cast<std::size_t>(rows * cols), 0.5f) {
    matrix = {{values.data(), rows * cols, DType::f32}, rows, cols};
  }
};

struct Counts {
  int forward;
  int backward;
};

Counts run_block(dtrain::comm::Communicator& comm, bool sequence_parallel, bool keep_gathered_input) {
  const int n = comm.size();
  const std::int64_t T = 8, H = 4, F = 8;
  const std::int64_t mine = sequence_parallel ? T / n : T;
  Buffer x(mine, H), whole_x(T, H), w1(F / n, H), h(T, F / n), w2(H, F / n), y(mine, H);
  Buffer dy(mine, H), dh(T, F / n), dw2(H, F / n), dx(mine, H), dw1(F / n, H);
  const auto queue = dtrain::device::make_host_queue();
  Group group(comm, *queue);
  const LinearFlags flags{sequence_parallel, false, false};
  dtrain::parallel::tp::column_forward(group, x.matrix, w1.matrix, nullptr, h.matrix, flags);
  dtrain::parallel::tp::row_forward(group, h.matrix, w2.matrix, nullptr, y.matrix, flags);
  const int forward = group.collectives_started();
  dtrain::parallel::tp::row_backward(group, h.matrix, w2.matrix, dy.matrix, &dh.matrix, &dw2.matrix, nullptr, flags);
  const Matrix& input = keep_gathered_input ? whole_x.matrix : x.matrix;
  dtrain::parallel::tp::column_backward(group, input, w1.matrix, dh.matrix, &dx.matrix, &dw1.matrix, nullptr, flags);
  return {forward, group.collectives_started() - forward};
}

TEST(TpCommunication, MlpBlockCostsOneAllreduceEachWay) {
  dtrain::test::run_world(2, [](dtrain::comm::Communicator& comm) {
    const Counts plain = run_block(comm, false, false);
    EXPECT_EQ(plain.forward, 1);
    EXPECT_EQ(plain.backward, 1);
  });
}

TEST(TpCommunication, SequenceParallelMlpBlockCostsOneAllgatherAndOneReduceScatterEachWay) {
  dtrain::test::run_world(2, [](dtrain::comm::Communicator& comm) {
    const Counts kept = run_block(comm, true, true);
    EXPECT_EQ(kept.forward, 2);
    EXPECT_EQ(kept.backward, 2);
    const Counts regathered = run_block(comm, true, false);
    EXPECT_EQ(regathered.forward, 2);
    EXPECT_EQ(regathered.backward, 3);
  });
}

}  // namespace
