#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "base/error.hpp"
#include "bootstrap/store/kv_table.hpp"

namespace dtrain::bootstrap {
namespace {

StoreLimits small_limits() {
  StoreLimits l;
  l.max_keys = 3;
  l.max_total_bytes = 40;
  return l;
}

TEST(StoreKvTable, SetFindRemove) {
  KvTable t(small_limits());
  EXPECT_TRUE(t.set("a", "1"));
  EXPECT_FALSE(t.set("a", "22"));
  ASSERT_NE(t.find("a"), nullptr);
  EXPECT_EQ(*t.find("a"), "22");
  EXPECT_EQ(t.find("b"), nullptr);
  EXPECT_EQ(t.bytes(), 3u);
  EXPECT_TRUE(t.remove("a"));
  EXPECT_FALSE(t.remove("a"));
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.bytes(), 0u);
}

TEST(StoreKvTable, KeyLimitRefusesNewKeysOnly) {
  KvTable t(small_limits());
  t.set("a", "");
  t.set("b", "");
  t.set("c", "");
  try {
    t.set("d", "");
    ADD_FAILURE() << "a fourth key was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("limit of 3 keys"), std::string::npos) << e.what();
  }
  EXPECT_EQ(t.find("d"), nullptr);
  EXPECT_NO_THROW(t.set("a", "overwrite"));
  t.remove("b");
  EXPECT_NO_THROW(t.set("d", ""));
}

TEST(StoreKvTable, ByteLimitCountsKeysAndValues) {
  KvTable t(small_limits());
  t.set("k", std::string(30, 'x'));  // 31 bytes
  EXPECT_THROW(t.set("j", std::string(9, 'x')), Error);  // 41 > 40
  EXPECT_EQ(t.bytes(), 31u);
  EXPECT_NO_THROW(t.set("k", std::string(39, 'x')));  // replacing: 40
  EXPECT_THROW(t.set("k", std::string(40, 'x')), Error);
  EXPECT_EQ(t.find("k")->size(), 39u);
}

TEST(StoreKvTable, AddCountsInDecimal) {
  KvTable t(StoreLimits{});
  bool created = false;
  EXPECT_EQ(t.add("n", 5, &created), 5);
  EXPECT_TRUE(created);
  EXPECT_EQ(t.add("n", -7, &created), -2);
  EXPECT_FALSE(created);
  EXPECT_EQ(*t.find("n"), "-2");
  t.set("text", "abc");
  try {
    t.add("text", 1, &created);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), DT_ERR_INVALID_USAGE);
  }
  t.set("big", std::to_string(LLONG_MAX));
  EXPECT_THROW(t.add("big", 1, &created), Error);
  EXPECT_EQ(*t.find("big"), std::to_string(LLONG_MAX));
  t.set("empty", "");
  EXPECT_THROW(t.add("empty", 1, &created), Error);
}

TEST(StoreKvTable, CompareAndSet) {
  KvTable t(StoreLimits{});
  auto r = t.compare_and_set("k", std::string_view("x"), "y");
  EXPECT_FALSE(r.swapped);
  EXPECT_FALSE(r.value.has_value());
  r = t.compare_and_set("k", std::nullopt, "first");
  EXPECT_TRUE(r.swapped);
  EXPECT_TRUE(r.created);
  EXPECT_EQ(r.value, "first");
  r = t.compare_and_set("k", std::nullopt, "again");
  EXPECT_FALSE(r.swapped);
  EXPECT_EQ(r.value, "first");
  r = t.compare_and_set("k", std::string_view("first"), "second");
  EXPECT_TRUE(r.swapped);
  EXPECT_FALSE(r.created);
  EXPECT_EQ(*t.find("k"), "second");
}

}  // namespace
}  // namespace dtrain::bootstrap
