// The shape of a device mesh: named dimensions, innermost first, over a
// world of ranks, and the arithmetic between a rank and its coordinates. Pure
// and local: the communicators live in mesh.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dtrain::parallel::mesh {

// The most dimensions and the longest name (dtrain/mesh.h).
constexpr int kMaxDims = 8;
constexpr std::size_t kMaxName = 15;

struct Dimension {
  std::string name;
  int size;
};

// A set of dimensions, one bit per dimension index.
using DimensionSet = unsigned;

class Shape {
 public:
  // Checks names and sizes against dtrain/mesh.h (throwing
  // DT_ERR_INVALID_ARGUMENT with what is wrong) and infers the one size that
  // may be DT_UNDEF from `world`.
  Shape(const std::vector<std::string>& names, const std::vector<int>& sizes, int world);

  int ndims() const { return static_cast<int>(dims_.size()); }
  int size() const { return world_; }
  const Dimension& dim(int index) const { return dims_[static_cast<std::size_t>(index)]; }

  // The index of dimension `name`; throws DT_ERR_INVALID_ARGUMENT naming the
  // mesh's dimensions when there is none.
  int index_of(std::string_view name) const;
  // The dimensions of a comma-separated list ("dp,cp"); throws for an empty
  // list, an unknown or a repeated name.
  DimensionSet parse(std::string_view list) const;
  // "dp,cp": the names of `set` in mesh order.
  std::string names_of(DimensionSet set) const;
  // "tp=2 x dp=3".
  std::string describe() const;

  std::vector<int> coords_of(int rank) const;
  // Throws for a wrong number of coordinates or one out of range.
  int rank_at(const std::vector<int>& coords) const;

  // Within the group of `rank` over `set` (the ranks that share its
  // coordinates outside `set`): which group (the linear index of the
  // coordinates outside `set`), its position (the linear index of those in
  // `set`), and every member in order of position.
  int group_of(int rank, DimensionSet set) const { return linear_index(rank, ~set); }
  int position_in_group(int rank, DimensionSet set) const { return linear_index(rank, set); }
  std::vector<int> group_members(int rank, DimensionSet set) const;

 private:
  // The coordinates of `rank` in the dimensions of `set`, as one mixed-radix
  // number, innermost first.
  int linear_index(int rank, DimensionSet set) const;

  std::vector<Dimension> dims_;
  int world_;
};

}  // namespace dtrain::parallel::mesh
