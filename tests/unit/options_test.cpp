// The versioned-options mechanism, on a struct with two released versions:
// a caller built against version 1 hands in a struct that ends before the
// version-2 field, and the library must neither read nor write past it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "base/error.hpp"
#include "base/options.hpp"

namespace dtrain {
namespace {

struct TwoVersionOptions {
  unsigned version;
  int first;   // since version 1
  int second;  // since version 2
};

constexpr std::size_t kSizes[] = {0, offsetof(TwoVersionOptions, second), sizeof(TwoVersionOptions)};
constexpr TwoVersionOptions kDefaults = {2, 10, 20};

TEST(Options, OlderVersionKeepsNewerFieldsAtDefaults) {
  // Version 1 of the struct, followed by bytes the library must not read.
  struct {
    TwoVersionOptions v1_prefix;
  } user;
  std::memset(&user, 0x7f, sizeof user);
  user.v1_prefix.version = 1;
  user.v1_prefix.first = 3;
  TwoVersionOptions read = read_options(&user.v1_prefix, kDefaults, kSizes, "opts");
  EXPECT_EQ(read.first, 3);
  EXPECT_EQ(read.second, 20) << "a version-1 caller never set the version-2 field";
  EXPECT_EQ(read.version, 2u);
}

TEST(Options, CurrentVersionIsReadWhole) {
  TwoVersionOptions user = {2, 5, 6};
  TwoVersionOptions read = read_options(&user, kDefaults, kSizes, "opts");
  EXPECT_EQ(read.first, 5);
  EXPECT_EQ(read.second, 6);
}

TEST(Options, NullMeansDefaults) {
  TwoVersionOptions read = read_options<TwoVersionOptions>(nullptr, kDefaults, kSizes, "opts");
  EXPECT_EQ(read.first, 10);
  EXPECT_EQ(read.second, 20);
}

TEST(Options, RefusesVersionZeroAndNewerThanLibrary) {
  for (unsigned version : {0u, 3u, 1000u}) {
    TwoVersionOptions user = {version, 1, 1};
    try {
      read_options(&user, kDefaults, kSizes, "opts");
      ADD_FAILURE() << "version " << version << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("opts.version = " + std::to_string(version)), std::string::npos);
    }
  }
}

TEST(Options, InitWritesOnlyThatVersionsFields) {
  TwoVersionOptions out;
  std::memset(&out, 0x55, sizeof out);
  const int untouched = out.second;
  init_options(&out, 1, kDefaults, kSizes, "opts");
  EXPECT_EQ(out.version, 1u);
  EXPECT_EQ(out.first, 10);
  EXPECT_EQ(out.second, untouched) << "init for version 1 wrote past the version-1 struct";
  init_options(&out, 2, kDefaults, kSizes, "opts");
  EXPECT_EQ(out.second, 20);
}

TEST(Options, InitRefusesNullAndUnknownVersions) {
  TwoVersionOptions out{};
  EXPECT_THROW(init_options<TwoVersionOptions>(nullptr, 1, kDefaults, kSizes, "opts"), Error);
  EXPECT_THROW(init_options(&out, 0, kDefaults, kSizes, "opts"), Error);
  EXPECT_THROW(init_options(&out, 3, kDefaults, kSizes, "opts"), Error);
}

}  // namespace
}  // namespace dtrain
