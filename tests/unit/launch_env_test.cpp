#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "base/error.hpp"
#include "bootstrap/launch_env.hpp"

namespace dtrain::bootstrap {
namespace {

const char* const kAllVariables[] = {
    "DTRAIN_RANK", "DTRAIN_WORLD_SIZE", "DTRAIN_LOCAL_RANK", "DTRAIN_STORE",
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
    "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"};

// Each test starts from an environment without launcher variables.
class LaunchEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kAllVariables) unsetenv(name);
  }
  void TearDown() override { SetUp(); }

  static dt_comm_options defaults() {
    dt_comm_options opts = DT_COMM_OPTIONS_INIT;
    return opts;
  }

  // The message of the DT_ERR_INVALID_ARGUMENT that resolving must raise.
  static std::string failure(const dt_comm_options& opts) {
    try {
      resolve_launch(opts);
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
      return e.what();
    }
    ADD_FAILURE() << "resolve_launch succeeded";
    return "";
  }
};

TEST_F(LaunchEnv, NoLauncherIsAWorldOfOne) {
  LaunchConfig c = resolve_launch(defaults());
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.world_size, 1);
  EXPECT_FALSE(c.store.has_value());
}

TEST_F(LaunchEnv, DtrainVariables) {
  setenv("DTRAIN_RANK", "2", 1);
  setenv("DTRAIN_WORLD_SIZE", "4", 1);
  setenv("DTRAIN_LOCAL_RANK", "0", 1);
  setenv("DTRAIN_STORE", "10.0.0.1:29500", 1);
  LaunchConfig c = resolve_launch(defaults());
  EXPECT_EQ(c.rank, 2);
  EXPECT_EQ(c.world_size, 4);
  EXPECT_EQ(c.local_rank, 0);
  EXPECT_EQ(c.store.value(), "10.0.0.1:29500");
}

TEST_F(LaunchEnv, Torchrun) {
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", "29400", 1);
  LaunchConfig c = resolve_launch(defaults());
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.world_size, 2);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.store.value(), "127.0.0.1:29400");
}

TEST_F(LaunchEnv, OpenMpiPmiAndSlurm) {
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "5", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  LaunchConfig ompi = resolve_launch(defaults());
  EXPECT_EQ(ompi.rank, 3);
  EXPECT_EQ(ompi.world_size, 5);
  EXPECT_EQ(ompi.local_rank, 1);
  SetUp();

  setenv("PMI_RANK", "1", 1);
  setenv("PMI_SIZE", "3", 1);
  LaunchConfig pmi = resolve_launch(defaults());
  EXPECT_EQ(pmi.rank, 1);
  EXPECT_EQ(pmi.world_size, 3);
  EXPECT_EQ(pmi.local_rank, 1) << "PMI has no local rank; the global rank stands in";
  SetUp();

  setenv("SLURM_PROCID", "7", 1);
  setenv("SLURM_NTASKS", "8", 1);
  setenv("SLURM_LOCALID", "3", 1);
  LaunchConfig slurm = resolve_launch(defaults());
  EXPECT_EQ(slurm.rank, 7);
  EXPECT_EQ(slurm.world_size, 8);
  EXPECT_EQ(slurm.local_rank, 3);
}

TEST_F(LaunchEnv, PrecedenceOptionsThenDtrainThenTorchrunThenMpiThenSlurm) {
  setenv("SLURM_PROCID", "0", 1);
  setenv("SLURM_NTASKS", "9", 1);
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  EXPECT_EQ(resolve_launch(defaults()).world_size, 8);
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "7", 1);
  EXPECT_EQ(resolve_launch(defaults()).world_size, 7);
  setenv("DTRAIN_RANK", "0", 1);
  setenv("DTRAIN_WORLD_SIZE", "6", 1);
  EXPECT_EQ(resolve_launch(defaults()).world_size, 6);
  dt_comm_options opts = defaults();
  opts.rank = 1;
  opts.world_size = 2;
  opts.store = "h:1";
  LaunchConfig c = resolve_launch(opts);
  EXPECT_EQ(c.world_size, 2);
  EXPECT_EQ(c.rank, 1);
  EXPECT_EQ(c.store.value(), "h:1");
}

TEST_F(LaunchEnv, ErrorsNameTheVariable) {
  setenv("DTRAIN_RANK", "4", 1);
  setenv("DTRAIN_WORLD_SIZE", "4", 1);
  EXPECT_NE(failure(defaults()).find("DTRAIN_RANK = 4 is not below DTRAIN_WORLD_SIZE = 4"), std::string::npos);

  setenv("DTRAIN_RANK", "x1", 1);
  EXPECT_NE(failure(defaults()).find("DTRAIN_RANK='x1'"), std::string::npos);

  SetUp();
  setenv("RANK", "0", 1);
  EXPECT_NE(failure(defaults()).find("RANK is set but WORLD_SIZE is not"), std::string::npos);

  SetUp();
  setenv("SLURM_NTASKS", "2", 1);
  EXPECT_NE(failure(defaults()).find("SLURM_NTASKS is set but SLURM_PROCID is not"), std::string::npos);

  SetUp();
  setenv("WORLD_SIZE", "0", 1);
  setenv("RANK", "0", 1);
  EXPECT_NE(failure(defaults()).find("WORLD_SIZE='0'"), std::string::npos);

  SetUp();
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  EXPECT_NE(failure(defaults()).find("MASTER_PORT is not set"), std::string::npos);
}

TEST_F(LaunchEnv, OptionErrorsNameTheOption) {
  dt_comm_options opts = defaults();
  opts.world_size = 0;
  EXPECT_NE(failure(opts).find("options.world_size"), std::string::npos);
  opts = defaults();
  opts.world_size = 2;
  opts.rank = 2;
  EXPECT_NE(failure(opts).find("options.rank = 2 is not below options.world_size = 2"), std::string::npos);
  opts.rank = -3;
  EXPECT_NE(failure(opts).find("options.rank = -3"), std::string::npos);
  opts = defaults();
  opts.world_size = 3;
  EXPECT_NE(failure(opts).find("options.rank is unset"), std::string::npos);
}

}  // namespace
}  // namespace dtrain::bootstrap
