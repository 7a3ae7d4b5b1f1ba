// The device mesh (dtrain/mesh.h). Arguments of the collective calls are
// checked inside the core's agreement, so that a rank refusing its own
// arguments still tells the others instead of leaving them waiting.
#include <algorithm>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "entry.hpp"
#include "handles.hpp"
#include "parallel/mesh/mesh.hpp"

using dtrain::capi::entry;
using dtrain::capi::require;
using dtrain::parallel::mesh::DimensionSet;
using dtrain::parallel::mesh::kMaxDims;
using dtrain::parallel::mesh::Mesh;
using dtrain::parallel::mesh::Shape;

namespace {

const char* const kCustomaryNames[] = {"tp", "cp", "ep", "dp", "pp"};
constexpr int kCustomaryDims = 5;

[[noreturn]] void invalid(const std::string& message) { dtrain::raise(DT_ERR_INVALID_ARGUMENT, message); }

Shape shape_from(int ndims, const char* const* names, const int* sizes, int world) {
  if (names == nullptr && ndims != kCustomaryDims) {
    invalid("ndims is " + std::to_string(ndims) + " with names NULL, which means the 5 dimensions tp, cp, ep, dp, pp");
  }
  if (ndims < 1 || ndims > kMaxDims) {
    invalid("ndims is " + std::to_string(ndims) + "; a mesh has 1 to " + std::to_string(kMaxDims) + " dimensions");
  }
  require(sizes, "sizes");
  const char* const* given = names != nullptr ? names : kCustomaryNames;
  std::vector<std::string> name_list;
  for (int i = 0; i < ndims; ++i) {
    if (given[i] == nullptr) invalid("names[" + std::to_string(i) + "] is NULL");
    name_list.emplace_back(given[i]);
  }
  return Shape(name_list, std::vector<int>(sizes, sizes + ndims), world);
}

const Shape& shape_of(const dt_mesh* mesh) { return require(mesh, "mesh")->impl->shape(); }

}  // namespace

extern "C" {

DT_API dt_status dt_mesh_create(dt_mesh** out, dt_comm* comm, int ndims, const char* const* names,
                                const int* sizes) {
  return entry([&] {
    auto& world = *require(comm, "comm")->impl;
    auto mesh = Mesh::create(world, [&] {
      require(out, "out");
      return shape_from(ndims, names, sizes, world.size());
    });
    *out = new dt_mesh{std::move(mesh)};
  });
}

DT_API dt_status dt_mesh_destroy(dt_mesh* mesh) {
  return entry([&] { delete mesh; });
}

DT_API dt_status dt_mesh_ndims(const dt_mesh* mesh, int* out) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    *require(out, "out") = shape.ndims();
  });
}

DT_API dt_status dt_mesh_size(const dt_mesh* mesh, int* out) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    *require(out, "out") = shape.size();
  });
}

DT_API dt_status dt_mesh_rank(const dt_mesh* mesh, int* out) {
  return entry([&] {
    require(mesh, "mesh");
    *require(out, "out") = mesh->impl->rank();
  });
}

DT_API dt_status dt_mesh_dim_name(const dt_mesh* mesh, int dim, const char** out) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    require(out, "out");
    if (dim < 0 || dim >= shape.ndims()) {
      invalid("dim " + std::to_string(dim) + " is outside 0.." + std::to_string(shape.ndims() - 1));
    }
    *out = shape.dim(dim).name.c_str();
  });
}

DT_API dt_status dt_mesh_dim_index(const dt_mesh* mesh, const char* name, int* out) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    require(out, "out");
    *out = shape.index_of(require(name, "name"));
  });
}

DT_API dt_status dt_mesh_dim_size(const dt_mesh* mesh, const char* name, int* out) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    require(out, "out");
    *out = shape.dim(shape.index_of(require(name, "name"))).size;
  });
}

DT_API dt_status dt_mesh_coord(const dt_mesh* mesh, const char* name, int* out) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    require(out, "out");
    const int dim = shape.index_of(require(name, "name"));
    *out = shape.coords_of(mesh->impl->rank())[static_cast<std::size_t>(dim)];
  });
}

DT_API dt_status dt_mesh_coords_of(const dt_mesh* mesh, int rank, int* coords, int ncoords) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    require(coords, "coords");
    if (ncoords != shape.ndims()) {
      invalid("ncoords is " + std::to_string(ncoords) + " for a mesh of " + std::to_string(shape.ndims()) +
              " dimensions");
    }
    if (rank < 0 || rank >= shape.size()) {
      invalid("rank " + std::to_string(rank) + " is outside 0.." + std::to_string(shape.size() - 1));
    }
    const std::vector<int> found = shape.coords_of(rank);
    std::copy(found.begin(), found.end(), coords);
  });
}

DT_API dt_status dt_mesh_rank_at(const dt_mesh* mesh, const int* coords, int ncoords, int* out) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    require(coords, "coords");
    require(out, "out");
    if (ncoords != shape.ndims()) {
      invalid("ncoords is " + std::to_string(ncoords) + " for a mesh of " + std::to_string(shape.ndims()) +
              " dimensions");
    }
    *out = shape.rank_at(std::vector<int>(coords, coords + ncoords));
  });
}

DT_API dt_status dt_mesh_group_ranks(const dt_mesh* mesh, const char* names, int* ranks, int capacity,
                                     int* count) {
  return entry([&] {
    const Shape& shape = shape_of(mesh);
    require(count, "count");
    if (capacity < 0) invalid("capacity is negative");
    if (capacity > 0) require(ranks, "ranks");
    const DimensionSet set = shape.parse(require(names, "names"));
    const std::vector<int> members = shape.group_members(mesh->impl->rank(), set);
    const int size = static_cast<int>(members.size());
    if (capacity > 0 && capacity < size) {
      invalid("capacity " + std::to_string(capacity) + " is less than the group's " + std::to_string(size) + " ranks");
    }
    if (capacity > 0) std::copy(members.begin(), members.end(), ranks);
    *count = size;
  });
}

DT_API dt_status dt_mesh_comm(dt_mesh* mesh, const char* names, dt_comm** out) {
  return entry([&] {
    auto comm = require(mesh, "mesh")->impl->communicator([&](const Shape& shape) {
      require(out, "out");
      return shape.parse(require(names, "names"));
    });
    *out = new dt_comm{std::move(comm)};
  });
}

}  // extern "C"
