// dt_comm_stats on a world of one: every finished operation counts once, by
// kind, with its bytes and time; bad arguments change nothing.
#include <gtest/gtest.h>

#include <dtrain.h>

#include <cstdlib>
#include <vector>

namespace {

class Stats : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"DTRAIN_RANK", "DTRAIN_WORLD_SIZE", "DTRAIN_STORE", "RANK", "WORLD_SIZE"}) unsetenv(name);
    ASSERT_EQ(dt_comm_create(&comm_, nullptr), DT_OK) << dt_error_last();
  }
  void TearDown() override { dt_comm_destroy(comm_); }

  dt_op_stats stats(dt_op_kind kind) {
    dt_op_stats out = DT_OP_STATS_INIT;
    EXPECT_EQ(dt_comm_stats(comm_, kind, &out), DT_OK) << dt_error_last();
    return out;
  }

  dt_comm* comm_ = nullptr;
};

DLTensor f32(float* data, std::int64_t* shape) { return {data, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0}; }

TEST_F(Stats, CountsFinishedOperationsByKind) {
  std::vector<float> data(100, 1.0f);
  std::int64_t shape[1] = {100};
  DLTensor t = f32(data.data(), shape);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(dt_allreduce(comm_, &t, &t, DT_SUM, nullptr, nullptr), DT_OK);
  ASSERT_EQ(dt_broadcast(comm_, &t, 0, nullptr, nullptr), DT_OK);
  dt_request* req = nullptr;
  ASSERT_EQ(dt_allreduce(comm_, &t, &t, DT_MAX, nullptr, &req), DT_OK);
  ASSERT_EQ(dt_request_wait(req, 10000), DT_OK);
  dt_request_free(req);
  ASSERT_EQ(dt_barrier(comm_), DT_OK);

  const dt_op_stats allreduce = stats(DT_OP_ALLREDUCE);
  EXPECT_EQ(allreduce.count, 4);
  EXPECT_EQ(allreduce.failed, 0);
  EXPECT_EQ(allreduce.bytes, 4 * 400);
  EXPECT_GE(allreduce.seconds, 0.0);
  EXPECT_EQ(stats(DT_OP_BROADCAST).count, 1);
  EXPECT_EQ(stats(DT_OP_BROADCAST).bytes, 400);
  EXPECT_EQ(stats(DT_OP_BARRIER).count, 1);
  EXPECT_EQ(stats(DT_OP_BARRIER).bytes, 0);
  EXPECT_EQ(stats(DT_OP_ALLGATHER).count, 0);
  const dt_op_stats all = stats(DT_OP_ALL);
  EXPECT_EQ(all.count, 6);
  EXPECT_EQ(all.bytes, 5 * 400);
  EXPECT_DOUBLE_EQ(all.seconds, allreduce.seconds + stats(DT_OP_BROADCAST).seconds + stats(DT_OP_BARRIER).seconds);
}

TEST_F(Stats, RefusedCallsAreNotOperations) {
  float x = 0;
  std::int64_t one[1] = {1}, two[1] = {2};
  DLTensor a = f32(&x, one), b = f32(&x, two);
  EXPECT_EQ(dt_allreduce(comm_, &a, &b, DT_SUM, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(stats(DT_OP_ALL).count, 0);
}

TEST_F(Stats, BadArguments) {
  dt_op_stats out = DT_OP_STATS_INIT;
  EXPECT_EQ(dt_comm_stats(nullptr, DT_OP_ALL, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_comm_stats(comm_, DT_OP_ALL, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_comm_stats(comm_, static_cast<dt_op_kind>(16), &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_comm_stats(comm_, static_cast<dt_op_kind>(-1), &out), DT_ERR_INVALID_ARGUMENT);
  out.version = 0;
  EXPECT_EQ(dt_comm_stats(comm_, DT_OP_ALL, &out), DT_ERR_INVALID_ARGUMENT);
  out.version = DT_OP_STATS_VERSION + 1;
  out.count = 77;
  EXPECT_EQ(dt_comm_stats(comm_, DT_OP_ALL, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out.count, 77);
}

}  // namespace
