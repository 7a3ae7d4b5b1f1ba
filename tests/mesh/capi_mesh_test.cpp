// The device mesh through the C API, one process per rank. Coordinates and
// groups are checked against a reference counted independently (an odometer
// whose first digit turns fastest), and every communicator the mesh hands out
// is checked by an allgather of mesh ranks over it, so that its members are
// proven by the data that crosses it. Then the refusals, which must reach
// every rank instead of hanging.
//
// CTest runs this alone (a world of one) and under dtrun with 4 and 8 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/world_fixture.hpp"
#include "dtrain.h"

namespace {

struct Shape {
  std::vector<std::string> names;
  std::vector<int> sizes;
  int world() const {
    int n = 1;
    for (int s : sizes) n *= s;
    return n;
  }
};

std::vector<int> coords_by_odometer(const std::vector<int>& sizes, int rank) {
  std::vector<int> digits(sizes.size(), 0);
  for (int r = 0; r < rank; ++r) {
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      if (++digits[d] < sizes[d]) break;
      digits[d] = 0;
    }
  }
  return digits;
}

// The ranks that share `rank`'s coordinates outside the dimensions in `picked`.
std::vector<int> group_by_comparison(const Shape& shape, int rank, const std::vector<bool>& picked) {
  const std::vector<int> mine = coords_by_odometer(shape.sizes, rank);
  std::vector<int> members;
  for (int r = 0; r < shape.world(); ++r) {
    const std::vector<int> theirs = coords_by_odometer(shape.sizes, r);
    bool same = true;
    for (std::size_t d = 0; d < mine.size(); ++d) same = same && (picked[d] || mine[d] == theirs[d]);
    if (same) members.push_back(r);
  }
  return members;
}

std::vector<const char*> c_names(const Shape& shape) {
  std::vector<const char*> names;
  for (const auto& n : shape.names) names.push_back(n.c_str());
  return names;
}

dt_status make_mesh(dt_comm* comm, const Shape& shape, dt_mesh** out) {
  const auto names = c_names(shape);
  return dt_mesh_create(out, comm, static_cast<int>(shape.names.size()), names.data(), shape.sizes.data());
}

// The mesh ranks of a communicator's members, in its rank order, as an
// allgather over it reports them.
std::vector<int> members_by_allgather(dt_comm* comm, int mesh_rank) {
  int size = 0;
  EXPECT_EQ(dt_comm_size(comm, &size), DT_OK);
  std::vector<std::int32_t> all(static_cast<std::size_t>(size), -1);
  std::int32_t mine = mesh_rank;
  std::int64_t one = 1, n = size;
  DLTensor send{&mine, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &one, nullptr, 0};
  DLTensor recv{all.data(), {kDLCPU, 0}, 1, {kDLInt, 32, 1}, &n, nullptr, 0};
  EXPECT_EQ(dt_allgather(comm, &send, &recv, nullptr, nullptr), DT_OK) << dt_error_last();
  return std::vector<int>(all.begin(), all.end());
}

class Mesh : public dtrain::testing::WorldFixture {
 protected:
  void check_group(dt_mesh* mesh, const Shape& shape, const std::vector<bool>& picked) {
    std::string list;
    for (std::size_t d = 0; d < picked.size(); ++d) {
      if (picked[d]) list = shape.names[d] + (list.empty() ? "" : ",") + list;  // reversed: order is irrelevant
    }
    SCOPED_TRACE("group over " + list);
    const std::vector<int> expected = group_by_comparison(shape, rank_, picked);

    int count = 0;
    ASSERT_EQ(dt_mesh_group_ranks(mesh, list.c_str(), nullptr, 0, &count), DT_OK) << dt_error_last();
    ASSERT_EQ(count, static_cast<int>(expected.size()));
    std::vector<int> listed(static_cast<std::size_t>(count));
    ASSERT_EQ(dt_mesh_group_ranks(mesh, list.c_str(), listed.data(), count, &count), DT_OK);
    EXPECT_EQ(listed, expected);

    dt_comm* group = nullptr;
    ASSERT_EQ(dt_mesh_comm(mesh, list.c_str(), &group), DT_OK) << dt_error_last();
    int group_rank = -1, group_size = -1;
    ASSERT_EQ(dt_comm_rank(group, &group_rank), DT_OK);
    ASSERT_EQ(dt_comm_size(group, &group_size), DT_OK);
    EXPECT_EQ(group_size, static_cast<int>(expected.size()));
    EXPECT_EQ(group_rank, std::find(expected.begin(), expected.end(), rank_) - expected.begin());
    EXPECT_EQ(members_by_allgather(group, rank_), expected);
    EXPECT_EQ(dt_comm_destroy(group), DT_OK);
  }

  void check_mesh(const Shape& shape) {
    SCOPED_TRACE(testing::PrintToString(shape.names) + " " + testing::PrintToString(shape.sizes));
    dt_mesh* mesh = nullptr;
    ASSERT_EQ(make_mesh(comm_, shape, &mesh), DT_OK) << dt_error_last();
    int ndims = 0, size = 0, rank = -1;
    ASSERT_EQ(dt_mesh_ndims(mesh, &ndims), DT_OK);
    ASSERT_EQ(dt_mesh_size(mesh, &size), DT_OK);
    ASSERT_EQ(dt_mesh_rank(mesh, &rank), DT_OK);
    EXPECT_EQ(ndims, static_cast<int>(shape.names.size()));
    EXPECT_EQ(size, size_);
    EXPECT_EQ(rank, rank_);

    const std::vector<int> expected = coords_by_odometer(shape.sizes, rank_);
    for (int d = 0; d < ndims; ++d) {
      const char* name = nullptr;
      int index = -1, extent = -1, coord = -1;
      ASSERT_EQ(dt_mesh_dim_name(mesh, d, &name), DT_OK);
      EXPECT_EQ(std::string(name), shape.names[d]);
      ASSERT_EQ(dt_mesh_dim_index(mesh, name, &index), DT_OK);
      EXPECT_EQ(index, d);
      ASSERT_EQ(dt_mesh_dim_size(mesh, name, &extent), DT_OK);
      EXPECT_EQ(extent, shape.sizes[d]);
      ASSERT_EQ(dt_mesh_coord(mesh, name, &coord), DT_OK);
      EXPECT_EQ(coord, expected[d]);
    }
    for (int r = 0; r < size_; ++r) {
      std::vector<int> coords(static_cast<std::size_t>(ndims), -1);
      ASSERT_EQ(dt_mesh_coords_of(mesh, r, coords.data(), ndims), DT_OK);
      EXPECT_EQ(coords, coords_by_odometer(shape.sizes, r));
      int back = -1;
      ASSERT_EQ(dt_mesh_rank_at(mesh, coords.data(), ndims, &back), DT_OK);
      EXPECT_EQ(back, r);
    }
    // Each dimension alone, and all but the innermost together.
    for (int d = 0; d < ndims; ++d) {
      std::vector<bool> picked(static_cast<std::size_t>(ndims), false);
      picked[static_cast<std::size_t>(d)] = true;
      check_group(mesh, shape, picked);
    }
    if (ndims > 1) {
      std::vector<bool> picked(static_cast<std::size_t>(ndims), true);
      picked[0] = false;
      check_group(mesh, shape, picked);
    }
    EXPECT_EQ(dt_mesh_destroy(mesh), DT_OK);
  }
};

TEST_F(Mesh, LaysOutEveryShapeOfThisWorldInTwoOrders) {
  const std::vector<Shape> shapes = {
      {{"dp"}, {1}},
      {{"tp", "dp"}, {2, 2}},
      {{"tp", "cp", "dp"}, {4, 1, 1}},
      {{"tp", "dp", "pp"}, {2, 2, 2}},
      {{"tp", "cp", "dp"}, {4, 1, 2}},
      {{"tp", "cp", "dp", "pp"}, {2, 1, 2, 2}},
  };
  int tried = 0;
  for (const Shape& shape : shapes) {
    if (shape.world() != size_) continue;
    ++tried;
    check_mesh(shape);
    Shape reversed{{shape.names.rbegin(), shape.names.rend()}, {shape.sizes.rbegin(), shape.sizes.rend()}};
    check_mesh(reversed);
  }
  if (tried == 0) {
    // Worlds the list has no shape for still get a one-dimensional mesh.
    check_mesh(Shape{{"dp"}, {size_}});
  }
}

TEST_F(Mesh, CustomaryNamesInferTheDataParallelSize) {
  const int sizes[5] = {1, 1, 1, DT_UNDEF, 1};
  dt_mesh* mesh = nullptr;
  ASSERT_EQ(dt_mesh_create(&mesh, comm_, 5, nullptr, sizes), DT_OK) << dt_error_last();
  const char* expected[5] = {"tp", "cp", "ep", "dp", "pp"};
  for (int d = 0; d < 5; ++d) {
    const char* name = nullptr;
    ASSERT_EQ(dt_mesh_dim_name(mesh, d, &name), DT_OK);
    EXPECT_STREQ(name, expected[d]);
  }
  int dp = 0, coord = -1;
  ASSERT_EQ(dt_mesh_dim_size(mesh, "dp", &dp), DT_OK);
  EXPECT_EQ(dp, size_);
  ASSERT_EQ(dt_mesh_coord(mesh, "dp", &coord), DT_OK);
  EXPECT_EQ(coord, rank_);
  dt_mesh_destroy(mesh);
}

TEST_F(Mesh, OutlivesTheCommunicatorItWasMadeFrom) {
  dt_comm* parent = nullptr;
  ASSERT_EQ(dt_comm_split(&parent, comm_, 0, rank_), DT_OK) << dt_error_last();
  dt_mesh* mesh = nullptr;
  ASSERT_EQ(make_mesh(parent, Shape{{"dp"}, {size_}}, &mesh), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_comm_destroy(parent), DT_OK);
  dt_comm* dp = nullptr;
  ASSERT_EQ(dt_mesh_comm(mesh, "dp", &dp), DT_OK) << dt_error_last();
  ASSERT_EQ(dt_mesh_destroy(mesh), DT_OK);
  std::vector<int> everyone(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) everyone[static_cast<std::size_t>(r)] = r;
  EXPECT_EQ(members_by_allgather(dp, rank_), everyone);  // and the communicator outlives the mesh
  dt_comm_destroy(dp);
}

TEST_F(Mesh, RefusesAShapeThatIsNotTheWorldOnEveryRank) {
  dt_mesh* mesh = nullptr;
  EXPECT_EQ(make_mesh(comm_, Shape{{"tp", "dp"}, {2, size_}}, &mesh), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("ranks but the communicator has"), std::string::npos)
      << dt_error_last();
  EXPECT_EQ(mesh, nullptr);
}

TEST_F(Mesh, OneRanksBadArgumentsReachEveryRank) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks: one refuses, the other hears of it";
  const bool bad = rank_ == size_ - 1;
  dt_mesh* mesh = nullptr;
  const Shape shape = bad ? Shape{{"dp", "dp"}, {size_, 1}} : Shape{{"dp", "tp"}, {size_, 1}};
  const dt_status status = make_mesh(comm_, shape, &mesh);
  if (bad) {
    EXPECT_EQ(status, DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(dt_error_last()).find("repeats"), std::string::npos) << dt_error_last();
  } else {
    EXPECT_EQ(status, DT_ERR_MISMATCH);
    EXPECT_NE(std::string(dt_error_last()).find("rank " + std::to_string(size_ - 1) + " refused its arguments"),
              std::string::npos)
        << dt_error_last();
  }
  EXPECT_EQ(mesh, nullptr);
  // The communicator is still usable: a good mesh follows.
  EXPECT_EQ(make_mesh(comm_, Shape{{"dp"}, {size_}}, &mesh), DT_OK) << dt_error_last();
  dt_mesh_destroy(mesh);
}

TEST_F(Mesh, RanksThatDisagreeAreAllRefused) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks to disagree";
  dt_mesh* mesh = nullptr;
  const Shape shape = rank_ == 0 ? Shape{{"tp", "dp"}, {size_, 1}} : Shape{{"tp", "dp"}, {1, size_}};
  EXPECT_EQ(make_mesh(comm_, shape, &mesh), DT_ERR_MISMATCH);
  const std::string expected = "dt_mesh_create: ranks disagree: the mesh tp=" + std::to_string(size_) +
                               " x dp=1 on rank 0 but the mesh tp=1 x dp=" + std::to_string(size_) + " on rank 1";
  EXPECT_EQ(std::string(dt_error_last()), expected);
  EXPECT_EQ(mesh, nullptr);
}

TEST_F(Mesh, CommunicatorRequestsAreAgreedOn) {
  dt_mesh* mesh = nullptr;
  ASSERT_EQ(make_mesh(comm_, Shape{{"tp", "dp"}, {1, size_}}, &mesh), DT_OK) << dt_error_last();
  dt_comm* out = nullptr;
  // Every rank names a dimension the mesh lacks.
  EXPECT_EQ(dt_mesh_comm(mesh, "pp", &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("no dimension \"pp\" (it has tp,dp)"), std::string::npos)
      << dt_error_last();
  EXPECT_EQ(dt_mesh_comm(mesh, "tp,tp", &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  if (size_ > 1) {
    // Ranks name different dimensions.
    EXPECT_EQ(dt_mesh_comm(mesh, rank_ == 0 ? "tp" : "dp", &out), DT_ERR_MISMATCH);
    EXPECT_EQ(std::string(dt_error_last()),
              "dt_mesh_comm: ranks disagree: the dimensions tp on rank 0 but the dimensions dp on rank 1");
    EXPECT_EQ(out, nullptr);
  }
  // Still usable afterwards.
  ASSERT_EQ(dt_mesh_comm(mesh, "dp,tp", &out), DT_OK) << dt_error_last();
  dt_comm_destroy(out);
  dt_mesh_destroy(mesh);
}

TEST_F(Mesh, LocalQueriesRefuseBadArguments) {
  dt_mesh* mesh = nullptr;
  ASSERT_EQ(make_mesh(comm_, Shape{{"tp", "dp"}, {1, size_}}, &mesh), DT_OK) << dt_error_last();
  int value = 7;
  const char* name = "unchanged";
  int coords[2] = {0, 0};
  EXPECT_EQ(dt_mesh_ndims(nullptr, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_ndims(mesh, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_dim_name(mesh, 2, &name), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_dim_name(mesh, -1, &name), DT_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(name, "unchanged");
  EXPECT_EQ(dt_mesh_dim_size(mesh, "pp", &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_coord(mesh, nullptr, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_coords_of(mesh, size_, coords, 2), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_coords_of(mesh, 0, coords, 3), DT_ERR_INVALID_ARGUMENT);
  const int outside[2] = {1, 0};
  EXPECT_EQ(dt_mesh_rank_at(mesh, outside, 2, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_error_last()).find("coordinate 1 of \"tp\" is outside 0..0"), std::string::npos)
      << dt_error_last();
  EXPECT_EQ(dt_mesh_rank_at(mesh, coords, 1, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(value, 7);
  int ranks[1] = {-1};
  if (size_ > 1) {
    EXPECT_EQ(dt_mesh_group_ranks(mesh, "dp", ranks, 1, &value), DT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(ranks[0], -1);
  }
  EXPECT_EQ(dt_mesh_group_ranks(mesh, "", ranks, 1, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_group_ranks(mesh, "tp", nullptr, 1, &value), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_destroy(nullptr), DT_OK);
  // A NULL `out` on every rank is refused on every rank.
  const int one = size_;
  const char* dp = "dp";
  EXPECT_EQ(dt_mesh_create(nullptr, comm_, 1, &dp, &one), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_mesh_create(&mesh, nullptr, 1, &dp, &one), DT_ERR_INVALID_ARGUMENT);
  dt_mesh_destroy(mesh);
}

}  // namespace
