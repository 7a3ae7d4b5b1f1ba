// Routing the library's log lines to a host's callback (dtrain/log.h).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "dtrain.h"

namespace {

struct Line {
  dt_log_level level;
  int rank;
  std::string message;
};

void collect(void* user, dt_log_level level, int rank, const char* message) {
  static_cast<std::vector<Line>*>(user)->push_back({level, rank, message});
}

// A refused call logs "returning <status>: <reason>" at debug level.
void refused_call() { EXPECT_EQ(dt_comm_rank(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT); }

class CapiLog : public ::testing::Test {
 protected:
  // Whatever a test does, later tests see the default routing and level.
  void TearDown() override {
    EXPECT_EQ(dt_set_log_callback(nullptr, nullptr), DT_OK);
    EXPECT_EQ(dt_set_log_level(DT_LOG_WARN), DT_OK);
  }
};

TEST_F(CapiLog, LevelsAreFixed) {
  EXPECT_EQ(DT_LOG_ERROR, 0);
  EXPECT_EQ(DT_LOG_WARN, 1);
  EXPECT_EQ(DT_LOG_INFO, 2);
  EXPECT_EQ(DT_LOG_DEBUG, 3);
  EXPECT_EQ(DT_LOG_TRACE, 4);
}

TEST_F(CapiLog, CallbackReceivesLinesAtTheLevelWithoutPrefix) {
  std::vector<Line> lines;
  ASSERT_EQ(dt_set_log_callback(collect, &lines), DT_OK);
  ASSERT_EQ(dt_set_log_level(DT_LOG_WARN), DT_OK);
  refused_call();
  EXPECT_TRUE(lines.empty()) << "a debug line passed the warn level: " << lines.front().message;

  ASSERT_EQ(dt_set_log_level(DT_LOG_DEBUG), DT_OK);
  refused_call();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].level, DT_LOG_DEBUG);
  EXPECT_EQ(lines[0].rank, -1);  // no communicator in this process yet
  EXPECT_EQ(lines[0].message, "returning invalid argument: comm is NULL");
}

TEST_F(CapiLog, CallbacksFromOtherThreadsAreSerialisedAndNullRestoresTheDefault) {
  std::vector<Line> lines;  // unguarded: the library serialises the calls
  ASSERT_EQ(dt_set_log_level(DT_LOG_DEBUG), DT_OK);
  ASSERT_EQ(dt_set_log_callback(collect, &lines), DT_OK);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 50; ++i) refused_call();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(lines.size(), 200u);

  ASSERT_EQ(dt_set_log_callback(nullptr, &lines), DT_OK);
  ::testing::internal::CaptureStderr();
  refused_call();
  const std::string written = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines.size(), 200u) << "the callback was called after it was removed";
  EXPECT_NE(written.find("DEBUG returning invalid argument: comm is NULL"), std::string::npos) << written;
}

TEST_F(CapiLog, ALevelOutsideTheEnumIsRefusedAndChangesNothing) {
  std::vector<Line> lines;
  ASSERT_EQ(dt_set_log_level(DT_LOG_DEBUG), DT_OK);
  ASSERT_EQ(dt_set_log_callback(collect, &lines), DT_OK);
  for (int bad : {-1, 5, 1000}) {
    EXPECT_EQ(dt_set_log_level(static_cast<dt_log_level>(bad)), DT_ERR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(std::string(dt_error_last()).find("is not a dt_log_level"), std::string::npos) << dt_error_last();
  }
  lines.clear();
  refused_call();
  EXPECT_EQ(lines.size(), 1u) << "a refused level changed the level";
}

}  // namespace
