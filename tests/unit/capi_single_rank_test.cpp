// The single-rank communicator through the C API: every operation of the
// core contract works with copy semantics, bad input is refused without
// side effects, and failures break the communicator as documented.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/cuda_device.hpp"
#include "common/host_tensor.hpp"
#include "dtrain.h"

namespace {

using dtrain::testing::HostTensor;

class SingleRank : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"DTRAIN_RANK", "DTRAIN_WORLD_SIZE", "RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                             "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS"}) {
      unsetenv(name);
    }
    ASSERT_EQ(dt_comm_create(&comm_, nullptr), DT_OK) << dt_error_last();
  }
  void TearDown() override { EXPECT_EQ(dt_comm_destroy(comm_), DT_OK); }

  // Creates a communicator with a short deadline, for tests that wait in vain.
  static dt_comm* with_timeout(int timeout_ms) {
    dt_comm_options opts = DT_COMM_OPTIONS_INIT;
    opts.timeout_ms = timeout_ms;
    dt_comm* comm = nullptr;
    EXPECT_EQ(dt_comm_create(&comm, &opts), DT_OK) << dt_error_last();
    return comm;
  }

  static std::string last() { return dt_error_last(); }

  dt_comm* comm_ = nullptr;
};

TEST_F(SingleRank, RankAndSize) {
  int rank = -1, size = -1;
  EXPECT_EQ(dt_comm_rank(comm_, &rank), DT_OK);
  EXPECT_EQ(dt_comm_size(comm_, &size), DT_OK);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 1);
  EXPECT_EQ(dt_comm_rank(comm_, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_comm_size(nullptr, &size), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(SingleRank, ExplicitWorldOfOneOptions) {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.rank = 0;
  opts.world_size = 1;
  opts.backend = DT_BACKEND_UCX;
  dt_comm* comm = nullptr;
  ASSERT_EQ(dt_comm_create(&comm, &opts), DT_OK) << last();
  dt_comm_destroy(comm);
}

TEST_F(SingleRank, CreateRefusesBadOptions) {
  dt_comm* comm = nullptr;
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.timeout_ms = 0;
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("options.timeout_ms"), std::string::npos);

  opts = DT_COMM_OPTIONS_INIT;
  opts.backend = static_cast<dt_backend>(7);
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("options.backend = 7"), std::string::npos);

  opts = DT_COMM_OPTIONS_INIT;
  opts.rank = 1;
  opts.world_size = 1;
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_INVALID_ARGUMENT);

  opts = DT_COMM_OPTIONS_INIT;
  opts.device = -2;
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(dt_comm_create(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(SingleRank, TimeoutFromEnvironment) {
  setenv("DTRAIN_TIMEOUT_MS", "nonsense", 1);
  dt_comm* comm = nullptr;
  EXPECT_EQ(dt_comm_create(&comm, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("DTRAIN_TIMEOUT_MS='nonsense'"), std::string::npos);

  setenv("DTRAIN_TIMEOUT_MS", "100", 1);
  ASSERT_EQ(dt_comm_create(&comm, nullptr), DT_OK);
  unsetenv("DTRAIN_TIMEOUT_MS");
  HostTensor<float> buf(4);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(dt_recv(comm, &buf, 0, 0, nullptr, nullptr), DT_ERR_TIMEOUT);
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  EXPECT_LT(waited, std::chrono::seconds(5));
  dt_comm_destroy(comm);
}

template <typename T>
void check_copies(dt_comm* comm) {
  const std::size_t n = 1023;
  HostTensor<T> send(n), recv(n, T(0));
  for (std::size_t i = 0; i < n; ++i) send[i] = T(i % 100);
  for (dt_reduce_op op : {DT_SUM, DT_MAX, DT_MIN, DT_PROD}) {
    std::fill(recv.values.begin(), recv.values.end(), T(0));
    ASSERT_EQ(dt_allreduce(comm, &send, &recv, op, nullptr, nullptr), DT_OK) << dt_error_last();
    EXPECT_EQ(recv.values, send.values);
  }
  std::fill(recv.values.begin(), recv.values.end(), T(0));
  ASSERT_EQ(dt_reduce_scatter(comm, &send, &recv, DT_SUM, nullptr, nullptr), DT_OK);
  EXPECT_EQ(recv.values, send.values);
  std::fill(recv.values.begin(), recv.values.end(), T(0));
  ASSERT_EQ(dt_allgather(comm, &send, &recv, nullptr, nullptr), DT_OK);
  EXPECT_EQ(recv.values, send.values);
  std::fill(recv.values.begin(), recv.values.end(), T(0));
  ASSERT_EQ(dt_alltoall(comm, &send, &recv, nullptr, nullptr), DT_OK);
  EXPECT_EQ(recv.values, send.values);
  ASSERT_EQ(dt_broadcast(comm, &send, 0, nullptr, nullptr), DT_OK);
  EXPECT_EQ(send[7], T(7));
}

TEST_F(SingleRank, CollectivesCopyEveryDtype) {
  check_copies<float>(comm_);
  check_copies<double>(comm_);
  check_copies<std::int32_t>(comm_);
  check_copies<std::int64_t>(comm_);
  check_copies<std::int8_t>(comm_);
  check_copies<std::uint8_t>(comm_);
}

TEST_F(SingleRank, AverageOfOneRankIsItsData) {
  HostTensor<double> buf(5);
  for (int i = 0; i < 5; ++i) buf[i] = 0.5 * i;
  ASSERT_EQ(dt_allreduce(comm_, &buf, &buf, DT_AVG, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(buf[3], 1.5);
}

TEST_F(SingleRank, InPlaceAndEmpty) {
  HostTensor<float> buf(8, 2.0f);
  ASSERT_EQ(dt_allreduce(comm_, &buf, &buf, DT_SUM, nullptr, nullptr), DT_OK);
  EXPECT_EQ(buf[7], 2.0f);
  HostTensor<float> empty(0);
  empty.tensor.data = nullptr;
  EXPECT_EQ(dt_allreduce(comm_, &empty, &empty, DT_SUM, nullptr, nullptr), DT_OK) << last();
  EXPECT_EQ(dt_allgather(comm_, &empty, &empty, nullptr, nullptr), DT_OK);
  EXPECT_EQ(dt_barrier(comm_), DT_OK);
}

TEST_F(SingleRank, AlltoallvCopiesTheCountedPrefix) {
  HostTensor<std::int32_t> send(10), recv(12, -1);
  for (int i = 0; i < 10; ++i) send[i] = i;
  int64_t counts[1] = {6};
  ASSERT_EQ(dt_alltoallv(comm_, &send, counts, &recv, counts, nullptr, nullptr), DT_OK) << last();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(recv[i], i);
  EXPECT_EQ(recv[6], -1) << "nothing written past the count";
  int64_t other[1] = {5};
  EXPECT_EQ(dt_alltoallv(comm_, &send, counts, &recv, other, nullptr, nullptr), DT_ERR_MISMATCH);
}

TEST_F(SingleRank, SendToSelfBeforeAndAfterTheReceive) {
  HostTensor<float> a(4, 1.0f), b(4, 2.0f), out(4, 0.0f);
  // Sent first: the message waits, buffered, for its receive.
  ASSERT_EQ(dt_send(comm_, &a, 0, 5, nullptr, nullptr), DT_OK);
  ASSERT_EQ(dt_send(comm_, &b, 0, 6, nullptr, nullptr), DT_OK);
  a[0] = 99.0f;  // the buffered copy is not affected
  ASSERT_EQ(dt_recv(comm_, &out, 0, 6, nullptr, nullptr), DT_OK);
  EXPECT_EQ(out[0], 2.0f) << "matched by tag, not by order";
  ASSERT_EQ(dt_recv(comm_, &out, 0, 5, nullptr, nullptr), DT_OK);
  EXPECT_EQ(out[0], 1.0f);

  // Received first: the send completes the posted receive.
  dt_request* req = nullptr;
  HostTensor<float> later(4, 0.0f);
  ASSERT_EQ(dt_recv(comm_, &later, 0, 9, nullptr, &req), DT_OK);
  EXPECT_EQ(dt_request_test(req), DT_INPROGRESS);
  HostTensor<float> c(4, 3.0f);
  ASSERT_EQ(dt_send(comm_, &c, 0, 9, nullptr, nullptr), DT_OK);
  EXPECT_EQ(dt_request_test(req), DT_OK);
  EXPECT_EQ(dt_request_wait(req, 0), DT_OK) << "waiting again returns the same status";
  EXPECT_EQ(later[3], 3.0f);
  dt_request_free(req);
}

TEST_F(SingleRank, SameTagMessagesArriveInOrder) {
  HostTensor<std::int64_t> one(1, 1), two(1, 2), out(1, 0);
  ASSERT_EQ(dt_send(comm_, &one, 0, 0, nullptr, nullptr), DT_OK);
  ASSERT_EQ(dt_send(comm_, &two, 0, 0, nullptr, nullptr), DT_OK);
  ASSERT_EQ(dt_recv(comm_, &out, 0, 0, nullptr, nullptr), DT_OK);
  EXPECT_EQ(out[0], 1);
  ASSERT_EQ(dt_recv(comm_, &out, 0, 0, nullptr, nullptr), DT_OK);
  EXPECT_EQ(out[0], 2);
}

TEST_F(SingleRank, ReceiveOfTheWrongSizeIsAMismatch) {
  HostTensor<float> small(2), large(4);
  ASSERT_EQ(dt_send(comm_, &large, 0, 1, nullptr, nullptr), DT_OK);
  EXPECT_EQ(dt_recv(comm_, &small, 0, 1, nullptr, nullptr), DT_ERR_MISMATCH);
  EXPECT_NE(last().find("matched a send of 4"), std::string::npos) << last();
  // A mismatch is the caller's bug, not a transport failure: the communicator still works.
  EXPECT_EQ(dt_barrier(comm_), DT_OK);
}

TEST_F(SingleRank, NonBlockingCollectives) {
  HostTensor<float> send(100, 1.0f), r1(100), r2(100);
  dt_request *a = nullptr, *b = nullptr;
  ASSERT_EQ(dt_allreduce(comm_, &send, &r1, DT_SUM, nullptr, &a), DT_OK);
  ASSERT_EQ(dt_allgather(comm_, &send, &r2, nullptr, &b), DT_OK);
  EXPECT_EQ(dt_request_wait(a, -1), DT_OK);
  EXPECT_EQ(dt_request_wait(b, 1000), DT_OK);
  EXPECT_EQ(r1[99], 1.0f);
  EXPECT_EQ(r2[0], 1.0f);
  dt_request_free(a);
  dt_request_free(b);
  dt_request_free(nullptr);
  EXPECT_EQ(dt_request_wait(nullptr, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_request_test(nullptr), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(SingleRank, BadInputIsRefusedAndChangesNothing) {
  HostTensor<float> send(8, 1.0f), recv(8, -5.0f), short_recv(4, -5.0f);
  HostTensor<std::int32_t> ints(8, 7);
  dt_request* req = reinterpret_cast<dt_request*>(0x1);
  auto untouched = [&] {
    for (float v : recv.values) EXPECT_EQ(v, -5.0f);
    for (float v : short_recv.values) EXPECT_EQ(v, -5.0f);
    EXPECT_EQ(req, reinterpret_cast<dt_request*>(0x1));
  };

  EXPECT_EQ(dt_allreduce(nullptr, &send, &recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "comm is NULL");
  EXPECT_EQ(dt_allreduce(comm_, nullptr, &recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last(), "send: tensor is NULL");
  EXPECT_EQ(dt_allreduce(comm_, &send, &short_recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("send has 8 elements but recv has 4"), std::string::npos) << last();
  EXPECT_EQ(dt_allreduce(comm_, &send, &ints, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("send is float32 but recv is int32"), std::string::npos) << last();
  EXPECT_EQ(dt_allreduce(comm_, &ints, &ints, DT_AVG, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("DT_AVG needs a floating-point dtype"), std::string::npos);
  EXPECT_EQ(dt_allreduce(comm_, &send, &recv, static_cast<dt_reduce_op>(9), nullptr, &req),
            DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_reduce_scatter(comm_, &send, &short_recv, DT_SUM, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_allgather(comm_, &send, &short_recv, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_alltoall(comm_, &send, &short_recv, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_broadcast(comm_, &recv, 1, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("root 1 is not a rank"), std::string::npos);
  EXPECT_EQ(dt_broadcast(comm_, &recv, -1, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_send(comm_, &send, 1, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("peer 1 is not a rank"), std::string::npos);
  EXPECT_EQ(dt_recv(comm_, &recv, -1, 0, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_send(comm_, &send, 0, -3, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("tag -3 is negative"), std::string::npos);

  int64_t negative[1] = {-1};
  int64_t too_many[1] = {9};
  int64_t fine[1] = {8};
  EXPECT_EQ(dt_alltoallv(comm_, &send, negative, &recv, fine, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("send_counts[0] = -1 is negative"), std::string::npos);
  EXPECT_EQ(dt_alltoallv(comm_, &send, fine, &recv, too_many, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last().find("recv_counts add up to more than recv's 8 elements"), std::string::npos) << last();
  EXPECT_EQ(dt_alltoallv(comm_, &send, nullptr, &recv, fine, nullptr, &req), DT_ERR_INVALID_ARGUMENT);
  untouched();

  EXPECT_EQ(dt_barrier(comm_), DT_OK) << "bad input leaves the communicator usable";
}

TEST_F(SingleRank, CudaTensorsAreUnsupportedWithoutADevice) {
  HostTensor<float> buf(4);
  buf.tensor.device = {kDLCUDA, 0};
  if (dtrain::testing::cuda_device_present()) {
    // With a device, host memory said to be CUDA memory is caught instead.
    EXPECT_EQ(dt_allreduce(comm_, &buf, &buf, DT_SUM, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(last().find("not CUDA device memory"), std::string::npos) << last();
    return;
  }
  EXPECT_EQ(dt_allreduce(comm_, &buf, &buf, DT_SUM, nullptr, nullptr), DT_ERR_UNSUPPORTED);
  EXPECT_NE(last().find("send: CUDA tensors need a CUDA device"), std::string::npos) << last();
}

TEST_F(SingleRank, TimeoutBreaksTheCommunicator) {
  dt_comm* comm = with_timeout(50);
  HostTensor<float> buf(4);
  EXPECT_EQ(dt_recv(comm, &buf, 0, 3, nullptr, nullptr), DT_ERR_TIMEOUT);
  EXPECT_NE(last().find("recv #1 did not complete within 50 ms"), std::string::npos) << last();
  EXPECT_EQ(dt_barrier(comm), DT_ERR_ABORTED);
  EXPECT_NE(last().find("broken"), std::string::npos);
  EXPECT_EQ(dt_allreduce(comm, &buf, &buf, DT_SUM, nullptr, nullptr), DT_ERR_ABORTED);
  EXPECT_EQ(dt_comm_destroy(comm), DT_OK);
}

TEST_F(SingleRank, WaitWithItsOwnDeadline) {
  HostTensor<float> buf(4);
  dt_request* req = nullptr;
  ASSERT_EQ(dt_recv(comm_, &buf, 0, 0, nullptr, &req), DT_OK);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(dt_request_wait(req, 30), DT_ERR_TIMEOUT);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(dt_request_test(req), DT_ERR_ABORTED) << "the timeout broke the communicator";
  dt_request_free(req);
}

TEST_F(SingleRank, AbortFromAnotherThreadWakesAWaiter) {
  HostTensor<float> buf(4);
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(dt_comm_abort(comm_), DT_OK);
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(dt_recv(comm_, &buf, 0, 0, nullptr, nullptr), DT_ERR_ABORTED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  aborter.join();
  EXPECT_EQ(dt_barrier(comm_), DT_ERR_ABORTED);
  EXPECT_NE(last().find("aborted by dt_comm_abort"), std::string::npos) << last();
  EXPECT_EQ(dt_comm_abort(nullptr), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(SingleRank, RequestOutlivesDestroyedCommunicator) {
  dt_comm* comm = nullptr;
  ASSERT_EQ(dt_comm_create(&comm, nullptr), DT_OK);
  HostTensor<float> buf(4);
  dt_request* req = nullptr;
  ASSERT_EQ(dt_recv(comm, &buf, 0, 0, nullptr, &req), DT_OK);
  ASSERT_EQ(dt_comm_destroy(comm), DT_OK);
  EXPECT_EQ(dt_request_wait(req, 1000), DT_ERR_ABORTED);
  EXPECT_NE(last().find("aborted"), std::string::npos) << last();
  dt_request_free(req);
  EXPECT_EQ(dt_comm_destroy(nullptr), DT_OK);
}

TEST_F(SingleRank, SplitMakesSingletonsOrNothing) {
  dt_comm* child = nullptr;
  ASSERT_EQ(dt_comm_split(&child, comm_, 3, 0), DT_OK) << last();
  ASSERT_NE(child, nullptr);
  int size = 0;
  dt_comm_size(child, &size);
  EXPECT_EQ(size, 1);
  HostTensor<float> buf(3, 4.0f), out(3);
  EXPECT_EQ(dt_allreduce(child, &buf, &out, DT_SUM, nullptr, nullptr), DT_OK);
  EXPECT_EQ(out[2], 4.0f);
  dt_comm_destroy(child);

  dt_comm* none = reinterpret_cast<dt_comm*>(0x1);
  ASSERT_EQ(dt_comm_split(&none, comm_, DT_UNDEF, 0), DT_OK);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(dt_comm_split(&none, comm_, -2, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_comm_split(&none, nullptr, 0, 0), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
