// Status codes, errors, versions and options through the public C API.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "dtrain.h"

namespace {

TEST(CapiStatus, ValuesAreFixed) {
  EXPECT_EQ(DT_OK, 0);
  EXPECT_EQ(DT_INPROGRESS, 1);
  EXPECT_EQ(DT_ERR_INVALID_ARGUMENT, -1);
  EXPECT_EQ(DT_ERR_INVALID_USAGE, -2);
  EXPECT_EQ(DT_ERR_UNSUPPORTED, -3);
  EXPECT_EQ(DT_ERR_OUT_OF_MEMORY, -4);
  EXPECT_EQ(DT_ERR_TIMEOUT, -5);
  EXPECT_EQ(DT_ERR_REMOTE, -6);
  EXPECT_EQ(DT_ERR_TRANSPORT, -7);
  EXPECT_EQ(DT_ERR_ABORTED, -8);
  EXPECT_EQ(DT_ERR_AUTH, -9);
  EXPECT_EQ(DT_ERR_MISMATCH, -10);
  EXPECT_EQ(DT_ERR_INTERNAL, -11);
  EXPECT_EQ(DT_UNDEF, INT_MIN);
}

TEST(CapiStatus, EveryStatusHasItsOwnString) {
  std::set<std::string> seen;
  for (int s = DT_ERR_INTERNAL; s <= DT_INPROGRESS; ++s) {
    std::string text = dt_status_string(static_cast<dt_status>(s));
    EXPECT_NE(text, "unknown status") << s;
    EXPECT_TRUE(seen.insert(text).second) << "duplicate string " << text;
  }
  EXPECT_STREQ(dt_status_string(static_cast<dt_status>(-999)), "unknown status");
  EXPECT_STREQ(dt_status_string(DT_ERR_TIMEOUT), "timeout");
}

TEST(CapiStatus, LastErrorIsPerThreadAndNeverNull) {
  std::string other_thread_before;
  std::thread([&] { other_thread_before = dt_error_last(); }).join();
  EXPECT_EQ(other_thread_before, "");

  EXPECT_EQ(dt_comm_rank(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  std::string mine = dt_error_last();
  EXPECT_EQ(mine, "comm is NULL");

  std::string other_thread_after = "unset";
  std::thread([&] { other_thread_after = dt_error_last(); }).join();
  EXPECT_EQ(other_thread_after, "") << "an error on one thread leaked into another";
  EXPECT_NE(dt_error_last(), nullptr);
}

TEST(CapiVersion, MatchesHeaderAndBuildInfoDescribesBuild) {
  int major = -1, minor = -1, patch = -1;
  dt_version(&major, &minor, &patch);
  EXPECT_EQ(major, DT_VERSION_MAJOR);
  EXPECT_EQ(minor, DT_VERSION_MINOR);
  EXPECT_EQ(patch, DT_VERSION_PATCH);
  dt_version(nullptr, nullptr, nullptr);  // any pointer may be NULL

  std::string info = dt_build_info();
  std::string version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  EXPECT_EQ(info.rfind("libdtrain " + version, 0), 0u) << info;
  EXPECT_NE(info.find("ucx: "), std::string::npos) << info;
  EXPECT_NE(info.find("cuda: "), std::string::npos) << info;
  EXPECT_NE(info.find("nccl: "), std::string::npos) << info;
  EXPECT_EQ(dt_build_info(), dt_build_info()) << "static text";
}

TEST(CapiOptions, InitFillsDefaults) {
  dt_comm_options opts;
  std::memset(&opts, 0x5a, sizeof opts);
  ASSERT_EQ(dt_comm_options_init(&opts, DT_COMM_OPTIONS_VERSION), DT_OK);
  EXPECT_EQ(opts.version, DT_COMM_OPTIONS_VERSION);
  EXPECT_EQ(opts.rank, DT_UNDEF);
  EXPECT_EQ(opts.world_size, DT_UNDEF);
  EXPECT_EQ(opts.store, nullptr);
  EXPECT_EQ(opts.auth_token, nullptr);
  EXPECT_EQ(opts.backend, DT_BACKEND_AUTO);
  EXPECT_EQ(opts.device, DT_UNDEF);
  EXPECT_EQ(opts.timeout_ms, DT_UNDEF);
  EXPECT_EQ(opts.oob_allgather, nullptr);
  EXPECT_EQ(opts.oob_user, nullptr);
}

TEST(CapiOptions, InitRefusesNullAndUnknownVersion) {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  EXPECT_EQ(dt_comm_options_init(nullptr, DT_COMM_OPTIONS_VERSION), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_comm_options_init(&opts, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_comm_options_init(&opts, DT_COMM_OPTIONS_VERSION + 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("version"), std::string::npos);
}

TEST(CapiOptions, CreateRefusesAVersionNewerThanTheLibrary) {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.version = DT_COMM_OPTIONS_VERSION + 1;
  dt_comm* comm = reinterpret_cast<dt_comm*>(0x1);
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(comm, reinterpret_cast<dt_comm*>(0x1)) << "a refused call changes nothing";
  EXPECT_NE(std::string(dt_error_last()).find("options.version = 2 is not supported"), std::string::npos)
      << dt_error_last();
}

TEST(CapiTensor, CheckReportsCountAndErrors) {
  float data[6] = {};
  int64_t shape[2] = {2, 3};
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  int64_t count = -1;
  EXPECT_EQ(dt_tensor_check(&t, &count), DT_OK);
  EXPECT_EQ(count, 6);
  EXPECT_EQ(dt_tensor_check(&t, nullptr), DT_OK);
  t.dtype = {kDLInt, 16, 1};
  EXPECT_EQ(dt_tensor_check(&t, &count), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("dtype int16"), std::string::npos) << dt_error_last();
  EXPECT_EQ(dt_tensor_check(nullptr, &count), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
