// Cluster presets and the cluster file format.
#include "plan/cluster.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/error.hpp"

namespace dtrain::plan {
namespace {

dt_status status_of(const std::string& text, std::string* message = nullptr) {
  try {
    parse_cluster(text, "test.cluster");
  } catch (const Error& e) {
    if (message != nullptr) *message = e.what();
    return e.status();
  }
  return DT_OK;
}

TEST(Cluster, PresetsHaveTheDataSheetFigures) {
  const Cluster a100 = preset("a100", 4);
  EXPECT_EQ(a100.gpus(), 32);
  EXPECT_EQ(a100.peak_flops, 312e12);
  EXPECT_EQ(a100.gpu_memory, 80e9);
  const Cluster h100 = preset("h100", 1);
  EXPECT_EQ(h100.peak_flops, 989e12);
  EXPECT_GT(h100.inter.bandwidth, a100.inter.bandwidth);
  EXPECT_EQ(preset("h200", 1).gpu_memory, 141e9);
  try {
    preset("tpu", 1);
    FAIL() << "an unknown preset was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("a100, h100 and h200"), std::string::npos) << e.what();
  }
}

TEST(Cluster, FileStartsFromAPresetAndOverridesIt) {
  const Cluster c =
      parse_cluster("# 16 H100 nodes on RoCE\npreset = h100\nnodes = 16\ninter_bandwidth = 25e9  # 200 Gb/s\n\n", "x");
  EXPECT_EQ(c.nodes, 16);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.inter.bandwidth, 25e9);
  EXPECT_EQ(c.peak_flops, 989e12);
}

TEST(Cluster, FileWithEveryFieldAndNoPreset) {
  const Cluster c = parse_cluster(
      "nodes = 2\ngpus_per_node = 4\ngpu_memory = 24e9\npeak_flops = 1e14\nmemory_bandwidth = 1e12\n"
      "gemm_efficiency = 0.5\nintra_bandwidth = 5e10\nintra_latency = 1e-5\ninter_bandwidth = 1e10\n"
      "inter_latency = 2e-5\n",
      "x");
  EXPECT_EQ(c.gpus(), 8);
  EXPECT_EQ(c.gemm_efficiency, 0.5);
  EXPECT_EQ(c.inter.latency, 2e-5);
  EXPECT_EQ(c.overlap, 1) << "overlap defaults to 1";
  EXPECT_EQ(parse_cluster("preset = a100\noverlap = 0\n", "x").overlap, 0);
  EXPECT_EQ(parse_cluster("preset = a100\noverlap = 0.5\n", "x").overlap, 0.5);
}

TEST(Cluster, BadFilesNameTheLine) {
  std::string message;
  EXPECT_EQ(status_of("preset = a100\nbandwidth = 3\n", &message), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("test.cluster:2"), std::string::npos) << message;
  EXPECT_EQ(status_of("preset = a100\nnodes = two\n", &message), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("not a number"), std::string::npos) << message;
  EXPECT_EQ(status_of("preset = a100\nnodes 2\n", &message), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(status_of("preset = a100\ngemm_efficiency = 1.5\n", &message), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("gemm_efficiency"), std::string::npos) << message;
  EXPECT_EQ(status_of("preset = a100\noverlap = 1.5\n", &message), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("overlap must be in [0, 1]"), std::string::npos) << message;
  EXPECT_EQ(status_of("preset = a100\noverlap = -0.1\n", &message), DT_ERR_INVALID_ARGUMENT);
  // A field never given.
  EXPECT_EQ(status_of("nodes = 2\ngpus_per_node = 8\n", &message), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("gpu_memory"), std::string::npos) << message;
}

TEST(Cluster, MissingFileIsAnIoError) {
  try {
    load_cluster("/nonexistent/dir/cluster.txt");
    FAIL() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_IO);
  }
}

}  // namespace
}  // namespace dtrain::plan
