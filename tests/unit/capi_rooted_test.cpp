// reduce, gather, scatter, allgatherv, reduce_scatterv and p2p groups
// through the C API on a world of one: copy semantics, what off-root
// arguments may be, and bad input refused with the exact status, starting
// nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/host_tensor.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::HostTensor;

class Rooted : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"DTRAIN_RANK", "DTRAIN_WORLD_SIZE", "RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                             "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"}) {
      unsetenv(name);
    }
    ASSERT_EQ(dt_comm_create(&comm_, nullptr), DT_OK) << dt_error_last();
  }
  void TearDown() override { EXPECT_EQ(dt_comm_destroy(comm_), DT_OK); }

  static std::string last() { return dt_error_last(); }

  dt_comm* comm_ = nullptr;
};

template <typename T>
void check_copies(dt_comm* comm) {
  const std::size_t n = 300;
  HostTensor<T> send(n), recv(n + 2, T(9));
  for (std::size_t i = 0; i < n; ++i) send[i] = T(i % 100);
  auto reset = [&] { std::fill(recv.values.begin(), recv.values.end(), T(9)); };
  auto expect_copied = [&](std::size_t count, const char* what) {
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(recv[i], send[i]) << what << " [" << i << "]";
    for (std::size_t i = count; i < n + 2; ++i) ASSERT_EQ(recv[i], T(9)) << what << " wrote past its count";
  };
  recv.shape[0] = n;
  for (dt_reduce_op op : {DT_SUM, DT_MAX, DT_MIN, DT_PROD}) {
    reset();
    ASSERT_EQ(dt_reduce(comm, &send, &recv, op, 0, nullptr, nullptr), DT_OK) << dt_error_last();
    expect_copied(n, "reduce");
  }
  reset();
  ASSERT_EQ(dt_gather(comm, &send, &recv, 0, nullptr, nullptr), DT_OK) << dt_error_last();
  expect_copied(n, "gather");
  reset();
  ASSERT_EQ(dt_scatter(comm, &send, &recv, 0, nullptr, nullptr), DT_OK) << dt_error_last();
  expect_copied(n, "scatter");
  // allgatherv and reduce_scatterv with counts short of the tensors.
  recv.shape[0] = n + 2;
  std::int64_t counts[1] = {static_cast<std::int64_t>(n)};
  reset();
  ASSERT_EQ(dt_allgatherv(comm, &send, &recv, counts, nullptr, nullptr), DT_OK) << dt_error_last();
  expect_copied(n, "allgatherv");
  std::int64_t fewer[1] = {static_cast<std::int64_t>(n - 50)};
  recv.shape[0] = n - 50;
  reset();
  ASSERT_EQ(dt_reduce_scatterv(comm, &send, fewer, &recv, DT_SUM, nullptr, nullptr), DT_OK) << dt_error_last();
  expect_copied(n - 50, "reduce_scatterv");
}

TEST_F(Rooted, EveryCollectiveCopiesEveryDtype) {
  check_copies<float>(comm_);
  check_copies<double>(comm_);
  check_copies<std::int32_t>(comm_);
  check_copies<std::int64_t>(comm_);
  check_copies<std::int8_t>(comm_);
  check_copies<std::uint8_t>(comm_);
}

TEST_F(Rooted, InPlaceEmptyAndNonBlocking) {
  HostTensor<double> buf(6, 1.5);
  ASSERT_EQ(dt_reduce(comm_, &buf, &buf, DT_AVG, 0, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(buf[5], 1.5);
  ASSERT_EQ(dt_gather(comm_, &buf, &buf, 0, nullptr, nullptr), DT_OK) << last();
  ASSERT_EQ(dt_scatter(comm_, &buf, &buf, 0, nullptr, nullptr), DT_OK) << last();
  std::int64_t six[1] = {6};
  ASSERT_EQ(dt_allgatherv(comm_, &buf, &buf, six, nullptr, nullptr), DT_OK) << last();
  ASSERT_EQ(dt_reduce_scatterv(comm_, &buf, six, &buf, DT_MAX, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(buf[0], 1.5);

  HostTensor<float> empty(0);
  empty.tensor.data = nullptr;
  std::int64_t zero[1] = {0};
  EXPECT_EQ(dt_allgatherv(comm_, &empty, &empty, zero, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(dt_reduce_scatterv(comm_, &empty, zero, &empty, DT_SUM, nullptr, nullptr), DT_OK) << last();

  HostTensor<std::int32_t> send(4, 3), recv(4, 0);
  dt_request* req = nullptr;
  ASSERT_EQ(dt_gather(comm_, &send, &recv, 0, nullptr, &req), DT_OK) << last();
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(dt_request_wait(req, -1), DT_OK);
  dt_request_free(req);
  EXPECT_EQ(recv[3], 3);
}

TEST_F(Rooted, BadInputIsRefusedWithTheExactStatusAndChangesNothing) {
  HostTensor<float> send(8, 1.0f), recv(8, -5.0f), short_recv(4, -5.0f);
  HostTensor<std::int32_t> ints(8, 7);
  dt_request* req = reinterpret_cast<dt_request*>(0x1);
  auto untouched = [&] {
    for (float v : recv.values) EXPECT_EQ(v, -5.0f);
    for (float v : short_recv.values) EXPECT_EQ(v, -5.0f);
    EXPECT_EQ(req, reinterpret_cast<dt_request*>(0x1));
  };
  std::int64_t fine[1] = {8};
  std::int64_t negative[1] = {-1};
  std::int64_t too_many[1] = {9};

  EXPECT_EQ(dt_reduce(nullptr, &send, &recv, DT_SUM, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "comm is NULL");
  EXPECT_EQ(dt_reduce(comm_, nullptr, &recv, DT_SUM, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "send: tensor is NULL");
  EXPECT_EQ(dt_reduce(comm_, &send, nullptr, DT_SUM, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT)
      << "the root's recv is required";
  EXPECT_EQ(dt_reduce(comm_, &send, &recv, DT_SUM, 1, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("root 1 is not a rank"), std::string::npos) << last();
  EXPECT_EQ(dt_reduce(comm_, &send, &short_recv, DT_SUM, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_reduce(comm_, &send, &ints, DT_SUM, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("send is float32 but recv is int32"), std::string::npos) << last();
  EXPECT_EQ(dt_reduce(comm_, &ints, &ints, DT_AVG, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_reduce(comm_, &send, &recv, static_cast<dt_reduce_op>(7), 0, nullptr, &req),
            DT_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(dt_gather(comm_, &send, &short_recv, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("recv on the root must hold size (1) x send's 8 elements"), std::string::npos) << last();
  EXPECT_EQ(dt_gather(comm_, &send, &recv, -1, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_gather(comm_, &send, nullptr, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_scatter(comm_, &send, &short_recv, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_scatter(comm_, nullptr, &recv, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_scatter(comm_, &send, &recv, 1, nullptr, &req), DT_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(dt_allgatherv(comm_, &send, &recv, nullptr, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "recv_counts is NULL");
  EXPECT_EQ(dt_allgatherv(comm_, &send, &recv, negative, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("recv_counts[0] = -1 is negative"), std::string::npos) << last();
  EXPECT_EQ(dt_allgatherv(comm_, &send, &recv, too_many, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("recv_counts add up to more than recv's 8 elements"), std::string::npos) << last();
  EXPECT_EQ(dt_allgatherv(comm_, &short_recv, &recv, fine, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("send has 4 elements but recv_counts[0] (this rank) is 8"), std::string::npos) << last();
  EXPECT_EQ(dt_allgatherv(comm_, &send, &ints, fine, nullptr, &req), DT_ERR_INVALID_ARGUMENT);

  EXPECT_EQ(dt_reduce_scatterv(comm_, &send, nullptr, &recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_reduce_scatterv(comm_, &send, negative, &recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_reduce_scatterv(comm_, &send, too_many, &recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("recv_counts add up to more than send's 8 elements"), std::string::npos) << last();
  EXPECT_EQ(dt_reduce_scatterv(comm_, &send, fine, &short_recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("recv has 4 elements but recv_counts[0] (this rank) is 8"), std::string::npos) << last();
  EXPECT_EQ(dt_reduce_scatterv(comm_, &ints, fine, &ints, DT_AVG, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  untouched();
  EXPECT_EQ(dt_barrier(comm_), DT_OK) << "bad input leaves the communicator usable";
}

TEST_F(Rooted, P2pGroupToOneselfInAnyOrder) {
  HostTensor<float> a(5, 1.0f), b(3, 2.0f), into_a(5, 0.0f), into_b(3, 0.0f);
  const dt_p2p_op ops[4] = {{DT_P2P_RECV, &into_a, 0, 1},
                            {DT_P2P_RECV, &into_b, 0, 2},
                            {DT_P2P_SEND, &b, 0, 2},
                            {DT_P2P_SEND, &a, 0, 1}};
  ASSERT_EQ(dt_p2p_group(comm_, ops, 4, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(into_a.values, a.values);
  EXPECT_EQ(into_b.values, b.values);

  // A group's receive waits for a later single send; one request for all.
  dt_request* req = nullptr;
  HostTensor<float> later(5, 0.0f);
  const dt_p2p_op wait_for_it[2] = {{DT_P2P_SEND, &b, 0, 4}, {DT_P2P_RECV, &later, 0, 3}};
  ASSERT_EQ(dt_p2p_group(comm_, wait_for_it, 2, nullptr, &req), DT_OK) << last();
  EXPECT_EQ(dt_request_test(req), DT_INPROGRESS);
  ASSERT_EQ(dt_send(comm_, &a, 0, 3, nullptr, nullptr), DT_OK);
  EXPECT_EQ(dt_request_wait(req, -1), DT_OK);
  dt_request_free(req);
  EXPECT_EQ(later.values, a.values);
  HostTensor<float> drained(3, 0.0f);
  ASSERT_EQ(dt_recv(comm_, &drained, 0, 4, nullptr, nullptr), DT_OK);
  EXPECT_EQ(drained.values, b.values);
}

TEST_F(Rooted, P2pGroupWithABadOpStartsNothing) {
  HostTensor<float> a(5, 1.0f), into(5, 0.0f);
  dt_request* req = reinterpret_cast<dt_request*>(0x1);
  const dt_p2p_op good = {DT_P2P_SEND, &a, 0, 6};
  const dt_p2p_op bad_peer[2] = {good, {DT_P2P_RECV, &into, 1, 6}};
  EXPECT_EQ(dt_p2p_group(comm_, bad_peer, 2, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("ops[1].peer 1 is not a rank"), std::string::npos) << last();
  const dt_p2p_op bad_tag[2] = {good, {DT_P2P_RECV, &into, 0, -2}};
  EXPECT_EQ(dt_p2p_group(comm_, bad_tag, 2, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("ops[1].tag -2 is negative"), std::string::npos) << last();
  const dt_p2p_op bad_kind[2] = {good, {5, &into, 0, 6}};
  EXPECT_EQ(dt_p2p_group(comm_, bad_kind, 2, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("ops[1].kind 5"), std::string::npos) << last();
  const dt_p2p_op no_tensor[2] = {good, {DT_P2P_RECV, nullptr, 0, 6}};
  EXPECT_EQ(dt_p2p_group(comm_, no_tensor, 2, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("ops[1].tensor"), std::string::npos) << last();
  EXPECT_EQ(dt_p2p_group(comm_, nullptr, 1, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_p2p_group(comm_, &good, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_p2p_group(nullptr, &good, 1, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(req, reinterpret_cast<dt_request*>(0x1));
  // None of the refused groups sent `a` with tag 6: a receive of it waits.
  req = nullptr;
  ASSERT_EQ(dt_recv(comm_, &into, 0, 6, nullptr, &req), DT_OK);
  EXPECT_EQ(dt_request_test(req), DT_INPROGRESS);
  ASSERT_EQ(dt_send(comm_, &a, 0, 6, nullptr, nullptr), DT_OK);
  EXPECT_EQ(dt_request_wait(req, -1), DT_OK);
  dt_request_free(req);
}

}  // namespace
