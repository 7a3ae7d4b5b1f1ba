// Algorithm choice by size and its overrides from the environment.

#include <gtest/gtest.h>

#include <cstdlib>

#include "base/error.hpp"
#include "comm/backends/ucx/tuning.hpp"
#include "common/scoped_env.hpp"

namespace dtrain::comm::ucx {
namespace {

using test::ScopedEnv;

TEST(UcxTuning, ChoosesBySize) {
  const Tuning t;
  EXPECT_EQ(t.pick_allreduce(1024, 256, 4), Algorithm::recursive_doubling);
  EXPECT_EQ(t.pick_allreduce(32768, 8192, 2), Algorithm::recursive_doubling);
  EXPECT_EQ(t.pick_allreduce(32768, 8192, 4), Algorithm::halving_doubling);
  EXPECT_EQ(t.pick_allreduce(65536, 16384, 2), Algorithm::ring);
  EXPECT_EQ(t.pick_allreduce(t.small_bytes + 4, (t.small_bytes + 4) / 4, 4), Algorithm::ring);
  // The ring needs an element per rank.
  EXPECT_EQ(t.pick_allreduce(1 << 20, 2, 4), Algorithm::recursive_doubling);
  EXPECT_EQ(t.pick_reduce_scatter(1024, 4), Algorithm::recursive_doubling);
  EXPECT_EQ(t.pick_reduce_scatter(1 << 20, 4), Algorithm::ring);
  EXPECT_EQ(t.pick_allgather(1024, 4), Algorithm::bruck);
  EXPECT_EQ(t.pick_allgather(1 << 20, 4), Algorithm::ring);
  EXPECT_EQ(t.pick_broadcast(1024, 4), Algorithm::tree);
  EXPECT_EQ(t.pick_broadcast(1 << 20, 4), Algorithm::pipeline);
}

TEST(UcxTuning, EnvironmentOverrides) {
  ScopedEnv a("DTRAIN_ALLREDUCE_ALGO", "ring");
  ScopedEnv b("DTRAIN_REDUCE_SCATTER_ALGO", "rd");
  ScopedEnv c("DTRAIN_ALLGATHER_ALGO", "bruck");
  ScopedEnv d("DTRAIN_BROADCAST_ALGO", "tree");
  ScopedEnv e("DTRAIN_UCX_SMALL_BYTES", "100");
  ScopedEnv f("DTRAIN_UCX_CHUNK_BYTES", "4096");
  ScopedEnv g("DTRAIN_UCX_PIPELINE_DEPTH", "7");
  ScopedEnv h("DTRAIN_UCX_SPIN_US", "0");
  ScopedEnv i("DTRAIN_UCX_HALVING_BYTES", "5000");
  ScopedEnv j("DTRAIN_UCX_LOCAL_BYTES", "0");
  const Tuning t = Tuning::from_env();
  EXPECT_EQ(t.pick_allreduce(8, 2, 4), Algorithm::ring);
  EXPECT_EQ(t.pick_reduce_scatter(1 << 30, 4), Algorithm::recursive_doubling);
  EXPECT_EQ(t.pick_allgather(1 << 30, 4), Algorithm::bruck);
  EXPECT_EQ(t.pick_broadcast(1 << 30, 4), Algorithm::tree);
  EXPECT_EQ(t.small_bytes, 100u);
  EXPECT_EQ(t.chunk_bytes, 4096u);
  EXPECT_EQ(t.pipeline_depth, 7);
  EXPECT_EQ(t.spin_us, 0);
  EXPECT_EQ(t.halving_bytes, 5000u);
  EXPECT_EQ(t.local_bytes, 0u);
}

TEST(UcxTuning, BadValuesNameTheVariable) {
  {
    ScopedEnv a("DTRAIN_ALLREDUCE_ALGO", "fast");
    try {
      Tuning::from_env();
      ADD_FAILURE() << "accepted DTRAIN_ALLREDUCE_ALGO=fast";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("DTRAIN_ALLREDUCE_ALGO"), std::string::npos) << e.what();
    }
  }
  ScopedEnv b("DTRAIN_UCX_PIPELINE_DEPTH", "0");
  EXPECT_THROW(Tuning::from_env(), Error);
}

}  // namespace
}  // namespace dtrain::comm::ucx
