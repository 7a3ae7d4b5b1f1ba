#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>

#include "base/log.hpp"

namespace dtrain::log {
namespace {

class LogToFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "dtrain_log_test_" + std::to_string(getpid()) + ".log";
    std::remove(path_.c_str());
    setenv("DTRAIN_LOG_FILE", path_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("DTRAIN_LOG_FILE");
    unsetenv("DTRAIN_LOG_LEVEL");
    set_rank(-1);
    configure_from_env();
    std::remove(path_.c_str());
  }
  std::string contents() const {
    std::ifstream in(path_);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }
  std::string path_;
};

TEST_F(LogToFile, LevelFiltersAndLinesCarryTimeRankAndLevel) {
  setenv("DTRAIN_LOG_LEVEL", "info", 1);
  configure_from_env();
  set_rank(3);
  DT_LOG(info) << "hello " << 42;
  DT_LOG(debug) << "hidden";
  DT_LOG(error) << "bad";
  std::string text = contents();
  EXPECT_TRUE(std::regex_search(
      text, std::regex(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z dtrain\[rank 3\] INFO hello 42\n)")))
      << text;
  EXPECT_NE(text.find("dtrain[rank 3] ERROR bad"), std::string::npos);
  EXPECT_EQ(text.find("hidden"), std::string::npos);
}

TEST_F(LogToFile, DefaultIsWarnAndUnknownRankShowsDash) {
  unsetenv("DTRAIN_LOG_LEVEL");
  configure_from_env();
  DT_LOG(info) << "not shown";
  DT_LOG(warn) << "shown";
  std::string text = contents();
  EXPECT_EQ(text.find("not shown"), std::string::npos);
  EXPECT_NE(text.find("dtrain[rank -] WARN shown"), std::string::npos);
}

TEST_F(LogToFile, TraceShowsEverything) {
  setenv("DTRAIN_LOG_LEVEL", "trace", 1);
  configure_from_env();
  DT_LOG(trace) << "t";
  DT_LOG(debug) << "d";
  std::string text = contents();
  EXPECT_NE(text.find("TRACE t"), std::string::npos);
  EXPECT_NE(text.find("DEBUG d"), std::string::npos);
}

TEST_F(LogToFile, UnknownLevelIsReportedAndWarnUsed) {
  setenv("DTRAIN_LOG_LEVEL", "chatty", 1);
  configure_from_env();
  DT_LOG(info) << "not shown";
  std::string text = contents();
  EXPECT_NE(text.find("DTRAIN_LOG_LEVEL='chatty'"), std::string::npos);
  EXPECT_EQ(text.find("not shown"), std::string::npos);
}

TEST_F(LogToFile, DisabledLevelsDoNotEvaluateTheMessage) {
  setenv("DTRAIN_LOG_LEVEL", "error", 1);
  configure_from_env();
  int evaluated = 0;
  auto side_effect = [&] { return ++evaluated; };
  DT_LOG(debug) << side_effect();
  EXPECT_EQ(evaluated, 0);
}

}  // namespace
}  // namespace dtrain::log
