// The mesh's rank arithmetic against a reference that knows nothing of
// strides: the grid is filled by counting ranks through an odometer whose
// first digit turns fastest, and a group is every rank that agrees with this
// one outside the named dimensions. Every shape of the issue, in every order
// of its dimension names; then the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "dtrain/common.h"
#include "parallel/mesh/shape.hpp"

namespace {

using dtrain::parallel::mesh::DimensionSet;
using dtrain::parallel::mesh::Shape;

// Coordinates of every rank, in rank order, counted like an odometer.
std::vector<std::vector<int>> odometer(const std::vector<int>& sizes) {
  int world = 1;
  for (int s : sizes) world *= s;
  std::vector<std::vector<int>> grid;
  std::vector<int> digits(sizes.size(), 0);
  for (int r = 0; r < world; ++r) {
    grid.push_back(digits);
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      if (++digits[d] < sizes[d]) break;
      digits[d] = 0;
    }
  }
  return grid;
}

std::vector<int> reference_group(const std::vector<std::vector<int>>& grid, int rank, DimensionSet set) {
  std::vector<int> members;
  for (int r = 0; r < static_cast<int>(grid.size()); ++r) {
    bool same = true;
    for (std::size_t d = 0; d < grid[0].size(); ++d) {
      if (!(set & (1u << d)) && grid[r][d] != grid[rank][d]) same = false;
    }
    if (same) members.push_back(r);
  }
  return members;
}

std::string join(const std::vector<std::string>& names, DimensionSet set, bool reversed) {
  std::vector<std::string> picked;
  for (std::size_t d = 0; d < names.size(); ++d) {
    if (set & (1u << d)) picked.push_back(names[d]);
  }
  if (reversed) std::reverse(picked.begin(), picked.end());
  std::string text;
  for (const auto& n : picked) text += (text.empty() ? "" : ",") + n;
  return text;
}

void check_shape(const std::vector<std::string>& names, const std::vector<int>& sizes) {
  const auto grid = odometer(sizes);
  const int world = static_cast<int>(grid.size());
  const Shape shape(names, sizes, world);
  ASSERT_EQ(shape.size(), world);
  ASSERT_EQ(shape.ndims(), static_cast<int>(names.size()));
  for (int r = 0; r < world; ++r) {
    ASSERT_EQ(shape.coords_of(r), grid[r]) << "rank " << r;
    ASSERT_EQ(shape.rank_at(grid[r]), r);
  }
  // Every non-empty set of dimensions, named in mesh order and reversed.
  for (DimensionSet set = 1; set < (1u << names.size()); ++set) {
    for (bool reversed : {false, true}) {
      const std::string list = join(names, set, reversed);
      ASSERT_EQ(shape.parse(list), set) << list;
    }
    std::map<int, std::vector<int>> groups;  // group number -> members
    for (int r = 0; r < world; ++r) {
      const std::vector<int> expected = reference_group(grid, r, set);
      ASSERT_EQ(shape.group_members(r, set), expected) << "rank " << r << " over " << join(names, set, false);
      const auto position = std::find(expected.begin(), expected.end(), r) - expected.begin();
      ASSERT_EQ(shape.position_in_group(r, set), position);
      auto [it, fresh] = groups.emplace(shape.group_of(r, set), expected);
      ASSERT_EQ(it->second, expected) << "two groups share the number " << shape.group_of(r, set);
    }
  }
}

struct Case {
  std::vector<std::string> names;
  std::vector<int> sizes;
};

TEST(MeshShape, EveryShapeInEveryOrder) {
  const std::vector<Case> cases = {
      {{"dp"}, {1}},
      {{"tp", "dp"}, {2, 2}},
      {{"tp", "dp", "pp"}, {2, 2, 2}},
      {{"tp", "cp", "dp"}, {4, 1, 2}},
      {{"tp", "cp", "dp", "pp"}, {2, 1, 2, 2}},
      {{"tp", "cp", "ep", "dp", "pp"}, {2, 1, 3, 1, 2}},
  };
  for (const Case& c : cases) {
    std::vector<std::size_t> order(c.names.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    do {
      std::vector<std::string> names;
      std::vector<int> sizes;
      for (std::size_t i : order) {
        names.push_back(c.names[i]);
        sizes.push_back(c.sizes[i]);
      }
      SCOPED_TRACE(testing::PrintToString(names) + " " + testing::PrintToString(sizes));
      check_shape(names, sizes);
    } while (std::next_permutation(order.begin(), order.end()));
  }
}

TEST(MeshShape, InfersTheOneUndefinedSize) {
  const Shape shape({"tp", "dp", "pp"}, {2, DT_UNDEF, 2}, 12);
  EXPECT_EQ(shape.dim(1).size, 3);
  EXPECT_EQ(shape.describe(), "tp=2 x dp=3 x pp=2");
}

dt_status refusal(const std::vector<std::string>& names, const std::vector<int>& sizes, int world,
                  std::string* message) {
  try {
    Shape shape(names, sizes, world);
  } catch (const dtrain::Error& e) {
    *message = e.what();
    return e.status();
  }
  return DT_OK;
}

TEST(MeshShape, RefusesBadShapesSayingWhy) {
  struct Bad {
    std::vector<std::string> names;
    std::vector<int> sizes;
    int world;
    std::string says;
  };
  const std::vector<Bad> bad = {
      {{"tp", "dp"}, {2, 3}, 4, "tp=2 x dp=3 has 6 ranks but the communicator has 4"},
      {{"tp", "tp"}, {2, 2}, 4, "\"tp\" repeats names[0]"},
      {{"tp", ""}, {2, 2}, 4, "names[1] is empty"},
      {{"TP"}, {4}, 4, "characters other than"},
      {{"a_name_that_is_too_long"}, {4}, 4, "longer than 15"},
      {{"tp", "dp"}, {0, 4}, 4, "size of \"tp\" is 0"},
      {{"tp", "dp"}, {DT_UNDEF, DT_UNDEF}, 4, "both DT_UNDEF"},
      {{"tp", "dp"}, {3, DT_UNDEF}, 4, "cannot be inferred"},
      {{}, {}, 1, "1 to 8 dimensions"},
      {{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, 1, "1 to 8 dimensions"},
  };
  for (const Bad& b : bad) {
    std::string message;
    EXPECT_EQ(refusal(b.names, b.sizes, b.world, &message), DT_ERR_INVALID_ARGUMENT) << b.says;
    EXPECT_NE(message.find(b.says), std::string::npos) << message;
  }
}

TEST(MeshShape, RefusesUnknownRepeatedAndEmptyNamesInAList) {
  const Shape shape({"tp", "dp"}, {2, 2}, 4);
  for (const char* list : {"pp", "tp,tp", "", "tp,", ",dp"}) {
    try {
      shape.parse(list);
      ADD_FAILURE() << "\"" << list << "\" was accepted";
    } catch (const dtrain::Error& e) {
      EXPECT_EQ(e.status(), DT_ERR_INVALID_ARGUMENT) << list;
    }
  }
  try {
    shape.parse("pp");
  } catch (const dtrain::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no dimension \"pp\" (it has tp,dp)"), std::string::npos) << e.what();
  }
}

TEST(MeshShape, RefusesCoordinatesOutsideTheMesh) {
  const Shape shape({"tp", "dp"}, {2, 3}, 6);
  EXPECT_THROW(shape.rank_at({2, 0}), dtrain::Error);
  EXPECT_THROW(shape.rank_at({0, -1}), dtrain::Error);
  EXPECT_THROW(shape.rank_at({0}), dtrain::Error);
  EXPECT_EQ(shape.rank_at({1, 2}), 5);
}

}  // namespace
