// Test helper: a fixture whose tests run on the communicator of this job's
// world, as dt_comm_create(&comm, NULL) finds it (a world of one when no
// launcher started the process, every rank under dtrun).
#pragma once

#include <gtest/gtest.h>

#include "dtrain.h"

namespace dtrain::testing {

class WorldFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(dt_comm_create(&comm_, nullptr), DT_OK) << dt_error_last();
    ASSERT_EQ(dt_comm_rank(comm_, &rank_), DT_OK);
    ASSERT_EQ(dt_comm_size(comm_, &size_), DT_OK);
  }
  void TearDown() override { EXPECT_EQ(dt_comm_destroy(comm_), DT_OK); }

  dt_comm* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace dtrain::testing
