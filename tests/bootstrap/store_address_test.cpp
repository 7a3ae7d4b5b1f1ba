#include <gtest/gtest.h>

#include <string>

#include "base/error.hpp"
#include "bootstrap/host_port.hpp"
#include "bootstrap/rank_list.hpp"

namespace dtrain::bootstrap {
namespace {

std::string failure(const std::string& text) {
  try {
    parse_host_port(text, "DTRAIN_STORE");
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
    return e.what();
  }
  ADD_FAILURE() << "'" << text << "' was accepted";
  return "";
}

TEST(StoreAddress, ParsesHostsAndPorts) {
  HostPort a = parse_host_port("node7:29500", "x");
  EXPECT_EQ(a.host, "node7");
  EXPECT_EQ(a.port, 29500);
  HostPort b = parse_host_port("10.0.0.1:1", "x");
  EXPECT_EQ(b.host, "10.0.0.1");
  EXPECT_EQ(b.port, 1);
  HostPort c = parse_host_port("[fe80::1]:65535", "x");
  EXPECT_EQ(c.host, "fe80::1");
  EXPECT_EQ(c.port, 65535);
  EXPECT_EQ(c.to_string(), "[fe80::1]:65535");
  EXPECT_EQ(a.to_string(), "node7:29500");
}

TEST(StoreAddress, ErrorsSayWhatIsWrongAndWhere) {
  std::string m = failure("node7");
  EXPECT_NE(m.find("DTRAIN_STORE='node7'"), std::string::npos) << m;
  EXPECT_NE(m.find("no ':port'"), std::string::npos) << m;
  EXPECT_NE(failure(":29500").find("host is empty"), std::string::npos);
  EXPECT_NE(failure("node7:").find("port is empty"), std::string::npos);
  EXPECT_NE(failure("node7:http").find("not a number"), std::string::npos);
  EXPECT_NE(failure("node7:0").find("1..65535"), std::string::npos);
  EXPECT_NE(failure("node7:65536").find("1..65535"), std::string::npos);
  EXPECT_NE(failure("node7:99999999999999999999").find("1..65535"), std::string::npos);
  EXPECT_NE(failure("node7:-1").find("not a number"), std::string::npos);
  EXPECT_NE(failure("::1:29500").find("brackets"), std::string::npos);
  EXPECT_NE(failure("[::1]29500").find("']'"), std::string::npos);
  EXPECT_NE(failure("[::1:29500").find("closing"), std::string::npos);
}

TEST(StoreAddress, RankListsCollapseRuns) {
  EXPECT_EQ(format_ranks({9, 1, 4, 5, 6, 7}), "1, 4-7, 9");
  EXPECT_EQ(format_ranks({3}), "3");
  EXPECT_EQ(describe_ranks({2}, 4), "rank 2 (of 4)");
  EXPECT_EQ(describe_ranks({0, 1, 3}, 4), "ranks 0-1, 3 (of 4)");
}

}  // namespace
}  // namespace dtrain::bootstrap
