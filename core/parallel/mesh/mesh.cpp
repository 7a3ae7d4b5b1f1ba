#include "parallel/mesh/mesh.hpp"

#include <cstring>
#include <optional>

#include "base/error.hpp"
#include "parallel/mesh/agreement.hpp"

namespace dtrain::parallel::mesh {

namespace {

// A shape as the agreement carries it: the number of dimensions, then per
// dimension its size and its name in two words (kMaxName characters fit).
constexpr std::size_t kNameWords = 2;
constexpr std::size_t kDimWords = 1 + kNameWords;
static_assert(kMaxName < kNameWords * sizeof(std::int64_t));

Record encode(const Shape& shape) {
  Record record(1 + kMaxDims * kDimWords, 0);
  record[0] = shape.ndims();
  for (int i = 0; i < shape.ndims(); ++i) {
    const Dimension& d = shape.dim(i);
    std::int64_t* slot = &record[1 + static_cast<std::size_t>(i) * kDimWords];
    slot[0] = d.size;
    std::memcpy(slot + 1, d.name.data(), d.name.size());
  }
  return record;
}

std::string describe_shape(const Record& record) {
  std::string text;
  for (std::int64_t i = 0; i < record[0]; ++i) {
    const std::int64_t* slot = &record[1 + static_cast<std::size_t>(i) * kDimWords];
    char name[kNameWords * sizeof(std::int64_t) + 1] = {};
    std::memcpy(name, slot + 1, kNameWords * sizeof(std::int64_t));
    if (!text.empty()) text += " x ";
    text += std::string(name) + "=" + std::to_string(slot[0]);
  }
  return "the mesh " + text;
}

}  // namespace

std::unique_ptr<Mesh> Mesh::create(comm::Communicator& comm, const std::function<Shape()>& make_shape) {
  std::optional<Shape> shape;
  std::exception_ptr failure;
  try {
    shape.emplace(make_shape());
  } catch (const Error&) {
    failure = std::current_exception();
  }
  agree_on_record(comm, "dt_mesh_create", shape ? encode(*shape) : Record(1 + kMaxDims * kDimWords, 0), failure,
                  describe_shape);
  return std::make_unique<Mesh>(comm.split(0, comm.rank()), std::move(*shape));
}

Mesh::Mesh(std::shared_ptr<comm::Communicator> comm, Shape shape) : comm_(std::move(comm)), shape_(std::move(shape)) {}

std::shared_ptr<comm::Communicator> Mesh::communicator(const std::function<DimensionSet(const Shape&)>& parse) {
  DimensionSet set = 0;
  std::exception_ptr failure;
  try {
    set = parse(shape_);
  } catch (const Error&) {
    failure = std::current_exception();
  }
  agree_on_record(*comm_, "dt_mesh_comm", Record{static_cast<std::int64_t>(set)}, failure, [&](const Record& r) {
    return "the dimensions " + shape_.names_of(static_cast<DimensionSet>(r[0]));
  });
  return comm_->split(shape_.group_of(rank(), set), shape_.position_in_group(rank(), set));
}

}  // namespace dtrain::parallel::mesh
