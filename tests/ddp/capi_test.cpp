// dt_ddp through the C API on a world of one: options, every documented
// refusal with its status and a message naming the problem (and nothing
// changed), misuse of steps, and a DDP that outlives its communicator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/cuda_device.hpp"
#include "dtrain.h"

namespace {

dt_ddp* const kUntouched = reinterpret_cast<dt_ddp*>(0x5eed);

// A world of one whatever the environment says.
dt_comm* world_of_one() {
  dt_comm_options opts = DT_COMM_OPTIONS_INIT;
  opts.rank = 0;
  opts.world_size = 1;
  dt_comm* comm = nullptr;
  EXPECT_EQ(dt_comm_create(&comm, &opts), DT_OK) << dt_error_last();
  return comm;
}

void expect_message(const std::string& needle) {
  EXPECT_NE(std::string(dt_error_last()).find(needle), std::string::npos)
      << "dt_error_last() = \"" << dt_error_last() << "\" lacks \"" << needle << "\"";
}

// Three f32 gradients, [2, 3], [4] and [5], and their DLTensors.
struct Grads {
  std::vector<std::vector<float>> values{std::vector<float>(6), std::vector<float>(4), std::vector<float>(5)};
  std::vector<std::vector<std::int64_t>> shapes{{2, 3}, {4}, {5}};
  std::vector<DLTensor> tensors;
  std::vector<const DLTensor*> pointers;

  Grads() {
    for (std::size_t t = 0; t < values.size(); ++t) {
      for (std::size_t i = 0; i < values[t].size(); ++i) values[t][i] = static_cast<float>(t * 10 + i) - 3.5f;
      DLTensor tensor{};
      tensor.data = values[t].data();
      tensor.device = {kDLCPU, 0};
      tensor.ndim = static_cast<int>(shapes[t].size());
      tensor.dtype = {kDLFloat, 32, 1};
      tensor.shape = shapes[t].data();
      tensors.push_back(tensor);
    }
    for (DLTensor& tensor : tensors) pointers.push_back(&tensor);
  }
  const DLTensor* const* get() const { return pointers.data(); }
  std::size_t size() const { return pointers.size(); }
};

class DdpCapi : public ::testing::Test {
 protected:
  void SetUp() override { comm_ = world_of_one(); }
  void TearDown() override { EXPECT_EQ(dt_comm_destroy(comm_), DT_OK); }

  // Creates from `grads` and `opts`, expects `status` and `needle` in the
  // message, `out` untouched and the gradients as they were.
  void expect_refused(const Grads& grads, const dt_ddp_options* opts, dt_status status,
                      const std::string& needle, std::size_t n = 3) {
    const auto before = grads.values;
    dt_ddp* out = kUntouched;
    EXPECT_EQ(dt_ddp_create(&out, comm_, grads.get(), n, opts), status);
    expect_message(needle);
    EXPECT_EQ(out, kUntouched);
    EXPECT_EQ(grads.values, before);
  }

  dt_ddp* make(const Grads& grads, const dt_ddp_options* opts = nullptr) {
    dt_ddp* ddp = nullptr;
    EXPECT_EQ(dt_ddp_create(&ddp, comm_, grads.get(), grads.size(), opts), DT_OK) << dt_error_last();
    return ddp;
  }

  dt_comm* comm_ = nullptr;
};

TEST(DdpOptions, InitWritesTheDefaultsOfItsVersion) {
  dt_ddp_options opts;
  std::memset(&opts, 0x7f, sizeof opts);
  ASSERT_EQ(dt_ddp_options_init(&opts, DT_DDP_OPTIONS_VERSION), DT_OK);
  const dt_ddp_options expected = DT_DDP_OPTIONS_INIT;
  EXPECT_EQ(opts.version, DT_DDP_OPTIONS_VERSION);
  EXPECT_EQ(opts.bucket_bytes, expected.bucket_bytes);
  EXPECT_EQ(opts.bucket_bytes, DT_UNDEF);
  EXPECT_EQ(opts.compression, DT_DDP_COMPRESS_NONE);
  EXPECT_EQ(opts.find_unused, DT_UNDEF);
  EXPECT_EQ(opts.weighted, DT_UNDEF);
  EXPECT_EQ(opts.stream, nullptr);

  EXPECT_EQ(dt_ddp_options_init(nullptr, DT_DDP_OPTIONS_VERSION), DT_ERR_INVALID_ARGUMENT);
  expect_message("NULL");
  EXPECT_EQ(dt_ddp_options_init(&opts, 0), DT_ERR_INVALID_ARGUMENT);
  expect_message("version 0");
  EXPECT_EQ(dt_ddp_options_init(&opts, DT_DDP_OPTIONS_VERSION + 1), DT_ERR_INVALID_ARGUMENT);
  expect_message("not supported");
}

TEST_F(DdpCapi, NullArguments) {
  Grads grads;
  dt_ddp* out = kUntouched;
  EXPECT_EQ(dt_ddp_create(nullptr, comm_, grads.get(), 3, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  EXPECT_EQ(dt_ddp_create(&out, nullptr, grads.get(), 3, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "comm is NULL");
  EXPECT_EQ(dt_ddp_create(&out, comm_, nullptr, 3, nullptr), DT_ERR_INVALID_ARGUMENT);
  expect_message("grads is NULL");
  EXPECT_EQ(out, kUntouched);

  std::size_t count = 0;
  dt_bucket_state state = DT_BUCKET_WAITING;
  EXPECT_EQ(dt_ddp_mark_ready(nullptr, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "ddp is NULL");
  EXPECT_EQ(dt_ddp_set_sync(nullptr, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_ddp_set_local_weight(nullptr, 1.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_ddp_wait(nullptr, -1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_ddp_bucket_count(nullptr, &count), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_ddp_bucket_of(nullptr, 0, &count), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_ddp_bucket_state(nullptr, 0, &state), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "ddp is NULL");
  EXPECT_EQ(dt_ddp_destroy(nullptr), DT_OK);

  dt_ddp* ddp = make(grads);
  EXPECT_EQ(dt_ddp_bucket_count(ddp, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  EXPECT_EQ(dt_ddp_bucket_of(ddp, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  EXPECT_EQ(dt_ddp_bucket_state(ddp, 0, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "out is NULL");
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);

  std::vector<double> param(3, 1.0);
  std::int64_t shape[1] = {3};
  DLTensor tensor{param.data(), {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape, nullptr, 0};
  DLTensor* params[1] = {&tensor};
  EXPECT_EQ(dt_ddp_broadcast_parameters(nullptr, params, 1, 0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(dt_error_last(), "comm is NULL");
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, nullptr, 1, 0), DT_ERR_INVALID_ARGUMENT);
  expect_message("params is NULL");
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, nullptr, 0, 0), DT_OK) << dt_error_last();
}

TEST_F(DdpCapi, BadGradients) {
  {
    Grads grads;
    grads.pointers[1] = nullptr;
    expect_refused(grads, nullptr, DT_ERR_INVALID_ARGUMENT, "gradients[1]");
  }
  {
    Grads grads;
    grads.tensors[2].dtype = {kDLInt, 32, 1};
    expect_refused(grads, nullptr, DT_ERR_INVALID_ARGUMENT, "floating point");
  }
  {
    Grads grads;
    grads.tensors[0].dtype = {kDLFloat, 8, 1};
    expect_refused(grads, nullptr, DT_ERR_INVALID_ARGUMENT, "gradients[0]");
  }
  {
    Grads grads;
    std::int64_t strides[2] = {1, 2};  // column-major: not compact row-major
    grads.tensors[0].strides = strides;
    expect_refused(grads, nullptr, DT_ERR_INVALID_ARGUMENT, "gradients[0]");
  }
  {
    Grads grads;
    grads.tensors[2].data = grads.values[1].data() + 2;  // [5] over the tail of [4]
    expect_refused(grads, nullptr, DT_ERR_INVALID_ARGUMENT, "overlap");
  }
  {
    Grads grads;
    // Without a device CUDA tensors are unsupported; with one, a CUDA
    // gradient among host ones is refused as scattered.
    grads.tensors[1].device = {kDLCUDA, 0};
    expect_refused(grads, nullptr,
                   dtrain::testing::cuda_device_present() ? DT_ERR_INVALID_ARGUMENT : DT_ERR_UNSUPPORTED,
                   "gradients[1]");
  }
  {
    Grads grads;
    grads.tensors[1].device = {kDLVulkan, 0};
    expect_refused(grads, nullptr, DT_ERR_INVALID_ARGUMENT, "gradients[1]");
  }
}

TEST_F(DdpCapi, BadOptions) {
  Grads grads;
  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  opts.bucket_bytes = 0;
  expect_refused(grads, &opts, DT_ERR_INVALID_ARGUMENT, "bucket_bytes");
  opts.bucket_bytes = -5;
  expect_refused(grads, &opts, DT_ERR_INVALID_ARGUMENT, "bucket_bytes");

  opts = DT_DDP_OPTIONS_INIT;
  const int bad_compression = 7;
  std::memcpy(&opts.compression, &bad_compression, sizeof bad_compression);  // what a C caller can pass
  expect_refused(grads, &opts, DT_ERR_INVALID_ARGUMENT, "compression");
  const int negative_compression = -1;
  std::memcpy(&opts.compression, &negative_compression, sizeof negative_compression);
  expect_refused(grads, &opts, DT_ERR_INVALID_ARGUMENT, "compression");

  opts = DT_DDP_OPTIONS_INIT;
  opts.version = 0;
  expect_refused(grads, &opts, DT_ERR_INVALID_ARGUMENT, "options.version = 0");
  opts.version = DT_DDP_OPTIONS_VERSION + 1;
  expect_refused(grads, &opts, DT_ERR_INVALID_ARGUMENT, "not supported");
}

// A caller built against version 1 of dt_ddp_options passes the shorter
// struct: the library reads only that, and init writes only that.
TEST_F(DdpCapi, VersionOneOptionsStillWork) {
  struct Version1 {
    dt_ddp_options fields;
    unsigned char guard[16];
  } v1;
  std::memset(&v1, 0xab, sizeof v1);
  ASSERT_EQ(dt_ddp_options_init(&v1.fields, 1), DT_OK);
  EXPECT_EQ(v1.fields.version, 1u);
  const auto* stream_bytes = reinterpret_cast<const unsigned char*>(&v1.fields.stream);
  for (std::size_t b = 0; b < sizeof(void*); ++b) EXPECT_EQ(stream_bytes[b], 0xab) << "byte " << b;

  Grads grads;
  v1.fields.bucket_bytes = 16;
  dt_ddp* ddp = nullptr;
  ASSERT_EQ(dt_ddp_create(&ddp, comm_, grads.get(), grads.size(), &v1.fields), DT_OK) << dt_error_last();
  std::size_t buckets = 0;
  ASSERT_EQ(dt_ddp_bucket_count(ddp, &buckets), DT_OK);
  EXPECT_EQ(buckets, 3u);
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

// The stream is for CUDA gradients; host gradients never touch it.
TEST_F(DdpCapi, HostGradientsIgnoreTheStream) {
  Grads grads;
  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  opts.stream = reinterpret_cast<void*>(0xdead);
  dt_ddp* ddp = make(grads, &opts);
  ASSERT_NE(ddp, nullptr);
  for (std::size_t i = 0; i < grads.size(); ++i) ASSERT_EQ(dt_ddp_mark_ready(ddp, i), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, UndefOptionsTakeTheDefaults) {
  Grads grads;
  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  const int undef = DT_UNDEF;
  std::memcpy(&opts.compression, &undef, sizeof undef);
  dt_ddp* ddp = make(grads, &opts);
  ASSERT_NE(ddp, nullptr);
  std::size_t buckets = 0;
  ASSERT_EQ(dt_ddp_bucket_count(ddp, &buckets), DT_OK);
  EXPECT_EQ(buckets, 1u);  // 25 MiB holds everything
  // Neither weighted nor find_unused.
  EXPECT_EQ(dt_ddp_set_local_weight(ddp, 2.0), DT_ERR_INVALID_USAGE);
  expect_message("weighted");
  EXPECT_EQ(dt_ddp_mark_ready(ddp, 0), DT_OK);
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_ERR_INVALID_USAGE);
  expect_message("never marked");
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, AStepOnAWorldOfOneLeavesTheGradients) {
  Grads grads;
  const auto before = grads.values;
  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  opts.bucket_bytes = 16;  // one bucket per gradient
  dt_ddp* ddp = make(grads, &opts);
  ASSERT_NE(ddp, nullptr);
  std::size_t buckets = 0, bucket = 99;
  ASSERT_EQ(dt_ddp_bucket_count(ddp, &buckets), DT_OK);
  ASSERT_EQ(buckets, 3u);
  // Reverse registration order: the last gradient's bucket starts first.
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(dt_ddp_bucket_of(ddp, i, &bucket), DT_OK);
    EXPECT_EQ(bucket, 2 - i);
  }
  dt_bucket_state state = DT_BUCKET_FAILED;
  ASSERT_EQ(dt_ddp_bucket_state(ddp, 0, &state), DT_OK);
  EXPECT_EQ(state, DT_BUCKET_WAITING);
  for (std::size_t i = 3; i-- > 0;) ASSERT_EQ(dt_ddp_mark_ready(ddp, i), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_ddp_bucket_state(ddp, 0, &state), DT_OK);
  EXPECT_TRUE(state == DT_BUCKET_IN_FLIGHT || state == DT_BUCKET_REDUCED) << state;
  ASSERT_EQ(dt_ddp_wait(ddp, 10000), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_ddp_bucket_state(ddp, 0, &state), DT_OK);
  EXPECT_EQ(state, DT_BUCKET_WAITING);  // the next step starts afresh
  EXPECT_EQ(grads.values, before);
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, IndicesOutOfRange) {
  Grads grads;
  dt_ddp* ddp = make(grads);
  ASSERT_NE(ddp, nullptr);
  std::size_t out = 77;
  dt_bucket_state state = DT_BUCKET_FAILED;
  EXPECT_EQ(dt_ddp_mark_ready(ddp, 3), DT_ERR_INVALID_ARGUMENT);
  expect_message("gradient 3 is out of range");
  EXPECT_EQ(dt_ddp_mark_ready(ddp, std::numeric_limits<std::size_t>::max()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_ddp_bucket_of(ddp, 3, &out), DT_ERR_INVALID_ARGUMENT);
  expect_message("out of range");
  EXPECT_EQ(out, 77u);
  EXPECT_EQ(dt_ddp_bucket_state(ddp, 1, &state), DT_ERR_INVALID_ARGUMENT);
  expect_message("bucket 1 is out of range");
  EXPECT_EQ(state, DT_BUCKET_FAILED);
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, MisusedSteps) {
  Grads grads;
  const auto before = grads.values;
  dt_ddp* ddp = make(grads);
  ASSERT_NE(ddp, nullptr);
  ASSERT_EQ(dt_ddp_mark_ready(ddp, 1), DT_OK);
  EXPECT_EQ(dt_ddp_mark_ready(ddp, 1), DT_ERR_INVALID_USAGE);
  expect_message("already marked");
  EXPECT_EQ(dt_ddp_set_sync(ddp, 0), DT_ERR_INVALID_USAGE);
  expect_message("in progress");
  // Unmarked gradients: named, the step abandoned, nothing changed.
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_ERR_INVALID_USAGE);
  expect_message("gradients 0, 2 were never marked");
  EXPECT_EQ(grads.values, before);
  // A fresh step works.
  for (std::size_t i = 0; i < 3; ++i) ASSERT_EQ(dt_ddp_mark_ready(ddp, i), DT_OK);
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << dt_error_last();

  // With sync off, marks and waits do nothing.
  ASSERT_EQ(dt_ddp_set_sync(ddp, 0), DT_OK);
  EXPECT_EQ(dt_ddp_mark_ready(ddp, 0), DT_OK);
  EXPECT_EQ(dt_ddp_mark_ready(ddp, 0), DT_OK);
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_OK);
  ASSERT_EQ(dt_ddp_set_sync(ddp, 1), DT_OK);
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_ERR_INVALID_USAGE);  // nothing marked in this step
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, FindUnusedCountsUnmarkedGradientsAsZero) {
  Grads grads;
  const auto before = grads.values;
  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  opts.find_unused = 1;
  dt_ddp* ddp = make(grads, &opts);
  ASSERT_NE(ddp, nullptr);
  ASSERT_EQ(dt_ddp_mark_ready(ddp, 2), DT_OK);
  ASSERT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << dt_error_last();
  EXPECT_EQ(grads.values[2], before[2]);
  EXPECT_EQ(grads.values[0], std::vector<float>(6, 0.0f));
  EXPECT_EQ(grads.values[1], std::vector<float>(4, 0.0f));
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, LocalWeights) {
  Grads grads;
  const auto before = grads.values;
  dt_ddp_options opts = DT_DDP_OPTIONS_INIT;
  opts.weighted = 1;
  dt_ddp* ddp = make(grads, &opts);
  ASSERT_NE(ddp, nullptr);
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(dt_ddp_set_local_weight(ddp, bad), DT_ERR_INVALID_ARGUMENT) << bad;
    expect_message("finite");
  }
  // Weights adding up to zero.
  ASSERT_EQ(dt_ddp_set_local_weight(ddp, 0.0), DT_OK);
  for (std::size_t i = 0; i < 3; ++i) ASSERT_EQ(dt_ddp_mark_ready(ddp, i), DT_OK);
  EXPECT_EQ(dt_ddp_set_local_weight(ddp, 1.0), DT_ERR_INVALID_USAGE);
  expect_message("first mark_ready");
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_ERR_INVALID_USAGE);
  expect_message("add up to");
  // A weighted step of one rank is the rank's own gradient.
  ASSERT_EQ(dt_ddp_set_local_weight(ddp, 8.0), DT_OK);
  for (std::size_t i = 0; i < 3; ++i) ASSERT_EQ(dt_ddp_mark_ready(ddp, i), DT_OK);
  ASSERT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << dt_error_last();
  for (std::size_t t = 0; t < 3; ++t) {
    for (std::size_t i = 0; i < before[t].size(); ++i) EXPECT_FLOAT_EQ(grads.values[t][i], before[t][i]);
  }
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, NoGradientsAtAll) {
  dt_ddp* ddp = nullptr;
  ASSERT_EQ(dt_ddp_create(&ddp, comm_, nullptr, 0, nullptr), DT_OK) << dt_error_last();
  std::size_t buckets = 9;
  ASSERT_EQ(dt_ddp_bucket_count(ddp, &buckets), DT_OK);
  EXPECT_EQ(buckets, 0u);
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_OK) << dt_error_last();
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

TEST_F(DdpCapi, BroadcastRefusals) {
  std::vector<double> a(3, 1.0);
  std::vector<std::int32_t> b(2, 7);
  std::int64_t shape_a[1] = {3}, shape_b[1] = {2};
  DLTensor ta{a.data(), {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, shape_a, nullptr, 0};
  DLTensor tb{b.data(), {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape_b, nullptr, 0};
  DLTensor* params[2] = {&ta, &tb};
  // A world of one: the parameters stay as they are (integers too).
  ASSERT_EQ(dt_ddp_broadcast_parameters(comm_, params, 2, 0), DT_OK) << dt_error_last();
  EXPECT_EQ(a, std::vector<double>(3, 1.0));
  EXPECT_EQ(b, std::vector<std::int32_t>(2, 7));

  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, params, 2, 1), DT_ERR_INVALID_ARGUMENT);
  expect_message("root 1");
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, params, 2, -1), DT_ERR_INVALID_ARGUMENT);
  expect_message("root -1");
  DLTensor* with_null[2] = {&ta, nullptr};
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, with_null, 2, 0), DT_ERR_INVALID_ARGUMENT);
  expect_message("parameters[1]");
  tb.dtype = {kDLComplex, 64, 1};
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, params, 2, 0), DT_ERR_INVALID_ARGUMENT);
  expect_message("parameters[1]");
  tb.dtype = {kDLInt, 32, 1};
  tb.data = a.data();  // overlaps a
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, params, 2, 0), DT_ERR_INVALID_ARGUMENT);
  expect_message("overlap");
  // The communicator still works.
  tb.data = b.data();
  EXPECT_EQ(dt_ddp_broadcast_parameters(comm_, params, 2, 0), DT_OK) << dt_error_last();
}

TEST(DdpLifetime, OutlivingTheCommunicatorFailsCleanly) {
  dt_comm* comm = world_of_one();
  ASSERT_NE(comm, nullptr);
  Grads grads;
  const auto before = grads.values;
  dt_ddp* ddp = nullptr;
  ASSERT_EQ(dt_ddp_create(&ddp, comm, grads.get(), grads.size(), nullptr), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_comm_destroy(comm), DT_OK);
  // Marking only fills a bucket until the last gradient, whose allreduce
  // cannot start; wait reports it.
  EXPECT_EQ(dt_ddp_mark_ready(ddp, 0), DT_OK);
  EXPECT_EQ(dt_ddp_mark_ready(ddp, 1), DT_OK);
  const dt_status last = dt_ddp_mark_ready(ddp, 2);
  EXPECT_TRUE(last == DT_OK || last == DT_ERR_ABORTED) << dt_status_string(last);
  EXPECT_EQ(dt_ddp_wait(ddp, -1), DT_ERR_ABORTED);
  EXPECT_EQ(grads.values, before);
  std::size_t buckets = 0;
  EXPECT_EQ(dt_ddp_bucket_count(ddp, &buckets), DT_OK);
  EXPECT_EQ(dt_ddp_destroy(ddp), DT_OK);
}

}  // namespace
