#include "parallel/mesh/shape.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "dtrain/common.h"

namespace dtrain::parallel::mesh {

namespace {

[[noreturn]] void invalid(const std::string& message) { raise(DT_ERR_INVALID_ARGUMENT, message); }

void check_name(const std::string& name, std::size_t index) {
  const std::string which = "names[" + std::to_string(index) + "]";
  if (name.empty()) invalid(which + " is empty");
  if (name.size() > kMaxName) {
    invalid(which + " \"" + name + "\" is longer than " + std::to_string(kMaxName) + " characters");
  }
  const bool allowed = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!allowed) invalid(which + " \"" + name + "\" has characters other than a-z, 0-9 and _");
}

}  // namespace

Shape::Shape(const std::vector<std::string>& names, const std::vector<int>& sizes, int world) : world_(world) {
  if (names.empty() || names.size() > static_cast<std::size_t>(kMaxDims)) {
    invalid("ndims is " + std::to_string(names.size()) + "; a mesh has 1 to " + std::to_string(kMaxDims) +
            " dimensions");
  }
  int inferred = -1;
  long long product = 1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    check_name(names[i], i);
    for (std::size_t j = 0; j < i; ++j) {
      if (names[j] == names[i]) invalid("names[" + std::to_string(i) + "] \"" + names[i] + "\" repeats names[" +
                                        std::to_string(j) + "]");
    }
    if (sizes[i] == DT_UNDEF) {
      if (inferred >= 0) {
        invalid("sizes of \"" + names[static_cast<std::size_t>(inferred)] + "\" and \"" + names[i] +
                "\" are both DT_UNDEF; at most one size is inferred");
      }
      inferred = static_cast<int>(i);
    } else if (sizes[i] < 1) {
      invalid("size of \"" + names[i] + "\" is " + std::to_string(sizes[i]) + "; sizes are at least 1");
    } else {
      product *= sizes[i];
    }
    dims_.push_back({names[i], sizes[i]});
  }
  if (inferred >= 0) {
    if (world % product != 0) {
      invalid("the size of \"" + names[static_cast<std::size_t>(inferred)] + "\" cannot be inferred: the other sizes (" +
              std::to_string(product) + " ranks) do not divide the communicator's " + std::to_string(world) + " ranks");
    }
    dims_[static_cast<std::size_t>(inferred)].size = static_cast<int>(world / product);
    product = world;
  }
  if (product != world) {
    invalid("the mesh " + describe() + " has " + std::to_string(product) + " ranks but the communicator has " +
            std::to_string(world));
  }
}

int Shape::index_of(std::string_view name) const {
  for (int i = 0; i < ndims(); ++i) {
    if (dims_[static_cast<std::size_t>(i)].name == name) return i;
  }
  invalid("the mesh has no dimension \"" + std::string(name) + "\" (it has " + names_of((1u << ndims()) - 1) + ")");
}

DimensionSet Shape::parse(std::string_view list) const {
  DimensionSet set = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string_view name = list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    if (name.empty()) invalid("the dimension list \"" + std::string(list) + "\" has an empty name");
    const DimensionSet bit = 1u << index_of(name);
    if (set & bit) invalid("the dimension list \"" + std::string(list) + "\" names \"" + std::string(name) + "\" twice");
    set |= bit;
    if (comma == std::string_view::npos) return set;
    start = comma + 1;
  }
}

std::string Shape::names_of(DimensionSet set) const {
  std::string text;
  for (int i = 0; i < ndims(); ++i) {
    if (!(set & (1u << i))) continue;
    if (!text.empty()) text += ",";
    text += dims_[static_cast<std::size_t>(i)].name;
  }
  return text;
}

std::string Shape::describe() const {
  std::string text;
  for (const Dimension& d : dims_) {
    if (!text.empty()) text += " x ";
    text += d.name + "=" + (d.size == DT_UNDEF ? std::string("?") : std::to_string(d.size));
  }
  return text;
}

std::vector<int> Shape::coords_of(int rank) const {
  std::vector<int> coords;
  for (const Dimension& d : dims_) {
    coords.push_back(rank % d.size);
    rank /= d.size;
  }
  return coords;
}

int Shape::rank_at(const std::vector<int>& coords) const {
  if (coords.size() != dims_.size()) {
    invalid(std::to_string(coords.size()) + " coordinates for a mesh of " + std::to_string(ndims()) + " dimensions");
  }
  int rank = 0;
  for (int i = ndims() - 1; i >= 0; --i) {
    const Dimension& d = dims_[static_cast<std::size_t>(i)];
    const int c = coords[static_cast<std::size_t>(i)];
    if (c < 0 || c >= d.size) {
      invalid("coordinate " + std::to_string(c) + " of \"" + d.name + "\" is outside 0.." + std::to_string(d.size - 1));
    }
    rank = rank * d.size + c;
  }
  return rank;
}

int Shape::linear_index(int rank, DimensionSet set) const {
  const std::vector<int> coords = coords_of(rank);
  int index = 0;
  for (int i = ndims() - 1; i >= 0; --i) {
    if (set & (1u << i)) index = index * dims_[static_cast<std::size_t>(i)].size + coords[static_cast<std::size_t>(i)];
  }
  return index;
}

std::vector<int> Shape::group_members(int rank, DimensionSet set) const {
  // Ranks rise with every coordinate, so the members in rank order are the
  // members in order of position.
  std::vector<int> members;
  const int group = group_of(rank, set);
  for (int r = 0; r < world_; ++r) {
    if (group_of(r, set) == group) members.push_back(r);
  }
  return members;
}

}  // namespace dtrain::parallel::mesh
