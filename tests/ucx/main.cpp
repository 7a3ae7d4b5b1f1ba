#include <gtest/gtest.h>

#include <cstdlib>

#include "process_child.hpp"

// The process fault tests start this executable again as each of their
// ranks, with the scenario in the environment.
int main(int argc, char** argv) {
  if (std::getenv("DTRAIN_UCX_TEST_SCENARIO") != nullptr) return dtrain::test::run_rank_process();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
